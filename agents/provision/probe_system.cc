// The host's OS, kernel (and whether modules can be built against it: the
// driver's DKMS build needs the headers), CPUs, memory, and where it runs.
#include <map>

#include "agents/provision/probe_context.h"
#include "agents/sys/proc_parsers.h"

namespace gpuctl::provision {
namespace {

void ProbeOs(ProbeContext& ctx) {
  Result<std::string> text = ctx.fs.ReadFile("etc/os-release");
  if (!text.ok()) text = ctx.fs.ReadFile("usr/lib/os-release");
  if (!text.ok()) {
    ctx.Note("OS unknown: no /etc/os-release or /usr/lib/os-release");
    return;
  }
  std::map<std::string, std::string> fields = sys::ParseOsRelease(*text);
  ctx.probe.os_id = fields["ID"];
  ctx.probe.os_version_id = fields["VERSION_ID"];
  ctx.probe.os_pretty_name = fields.count("PRETTY_NAME") ? fields["PRETTY_NAME"] : fields["NAME"];
  if (ctx.probe.os_id.empty()) ctx.Note("OS unknown: os-release has no ID");
}

void ProbeKernel(ProbeContext& ctx) {
  ctx.probe.kernel_release = ctx.fs.ReadKernelRelease();
  const std::string& release = ctx.probe.kernel_release;
  if (release.empty()) {
    ctx.Note("kernel release unknown: /proc/sys/kernel/osrelease unreadable");
    return;
  }
  // Where module builds look; a dangling link (headers removed) does not count.
  if (ctx.Exists("lib/modules/" + release + "/build")) {
    ctx.probe.kernel_headers_installed = true;
    return;
  }
  // Debian/Ubuntu name the package after the release; no dpkg: not Debian-like.
  // A failure means "not installed", which the note below says.
  std::optional<sys::CommandOutput> dpkg = ctx.Run({"dpkg-query", "-W", "-f=${Status}", "linux-headers-" + release},
                                                   ProbeContext::NoteFailure::kNever);
  ctx.probe.kernel_headers_installed = dpkg && dpkg->stdout_text.find("install ok installed") != std::string::npos;
  if (!ctx.probe.kernel_headers_installed) {
    ctx.Note("no kernel headers for " + release + " (the driver's module build needs them)");
  }
}

// The variable's GUID is EFI's global one; no EFI (BIOS boot) means no Secure Boot.
void ProbeSecureBoot(ProbeContext& ctx) {
  auto efivar = ctx.fs.ReadFile("sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c");
  if (!efivar.ok()) return;
  std::optional<bool> on = SecureBootFromEfiVar(*efivar);
  if (!on) ctx.Note("Secure Boot state unknown: the SecureBoot EFI variable has " + std::to_string(efivar->size()) + " bytes");
  ctx.probe.secure_boot = on.value_or(false);
}

void ProbeResources(ProbeContext& ctx) {
  ctx.probe.cpus = ctx.fs.ReadCpuCount();
  Result<sys::Meminfo> meminfo = ctx.fs.ReadMeminfo();
  if (!meminfo.ok()) {
    ctx.Note("memory unknown: " + meminfo.status().message());
    return;
  }
  ctx.probe.mem_total_bytes = meminfo->mem_total_bytes();
  ctx.probe.mem_available_bytes = meminfo->mem_available_bytes();
}

void ProbeWhereItRuns(ProbeContext& ctx) {
  ctx.probe.where = sys::DetectWhereRunning(ctx.fs);
  ctx.probe.lxc_guest = ctx.probe.where.kind == sys::WhereKind::kLxc;
  ctx.probe.proxmox_host = ctx.Exists("usr/sbin/pct") || ctx.Exists("etc/pve");
  if (!ctx.probe.proxmox_host) return;
  std::optional<sys::CommandOutput> pve = ctx.Run({"pveversion"});
  if (pve) ctx.probe.proxmox_version = pve->stdout_text.substr(0, pve->stdout_text.find('\n'));
}

}  // namespace

std::optional<bool> SecureBootFromEfiVar(std::string_view efivar) {
  if (efivar.size() != 5) return std::nullopt;
  return efivar[4] == 1;
}

void ProbeSystem(ProbeContext& ctx) {
  ProbeOs(ctx);
  ProbeKernel(ctx);
  ProbeSecureBoot(ctx);
  ProbeResources(ctx);
  ProbeWhereItRuns(ctx);
}

}  // namespace gpuctl::provision
