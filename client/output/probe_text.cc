#include "client/output/probe_text.h"

#include <sstream>

#include "client/output/where_running_output.h"
#include "common/utf8.h"
#include "common/units.h"

namespace gpuctl::client {
namespace {

std::string OrUnknown(const std::string& value) { return value.empty() ? "unknown" : value; }

// `text` holds what the host said (versions, names, paths): escaped.
void Line(std::ostringstream& out, const char* label, const std::string& text) {
  out << label << std::string(10 - std::string(label).size(), ' ') << EscapeForTerminal(text) << "\n";
}

std::string Gpu(const v1::PciGpu& g) {
  std::string text = g.pci_address() + " " + (g.name().empty() ? "NVIDIA GPU" : g.name());
  if (!g.device_id().empty()) text += " [" + g.vendor_id() + ":" + g.device_id() + "]";
  return text + ", compute capability " + OrUnknown(g.compute_capability());
}

std::string Driver(const v1::HostProbe& p) {
  std::string text = p.has_driver_module()
                         ? "module " + p.driver_module().version() + " (" + p.driver_module().flavor() + ")"
                         : "no module loaded";
  text += ", library " + (p.driver_library_version().empty() ? "none" : p.driver_library_version());
  if (p.driver_version_mismatch()) text += "  MISMATCH";
  return text;
}

std::string Venv(const v1::PythonVenv& v) {
  std::string text = v.path() + ": python " + OrUnknown(v.python_version()) + ", ";
  if (v.torch_version().empty()) return text + "no torch";
  return text + "torch " + v.torch_version() + (v.torch_cuda().empty() ? " (CPU)" : " (CUDA " + v.torch_cuda() + ")");
}

// The same words as `health`'s host line; an agent older than `where` has only lxc_guest.
std::string Where(const v1::HostProbe& p) {
  std::string where = WhereRunningText(p.where());
  if (where.empty()) where = p.lxc_guest() ? "LXC guest" : "host";
  if (p.proxmox_host()) where += ", Proxmox host" + (p.proxmox_version().empty() ? "" : " (" + p.proxmox_version() + ")");
  return where;
}

}  // namespace

std::string ProbeToText(const v1::HostProbe& p) {
  std::ostringstream out;
  Line(out, "os", (p.os_pretty_name().empty() ? OrUnknown(p.os_id()) : p.os_pretty_name()) + ", " + Where(p));
  // Line() escapes its text; the evidence is escaped already, so it is written directly.
  if (p.where().evidence_size() > 0) out << "where     " << WhereEvidenceText(p.where()) << "\n";
  Line(out, "kernel", OrUnknown(p.kernel_release()) +
                          (p.kernel_headers_installed() ? ", headers installed" : ", no headers"));
  Line(out, "cpus", std::to_string(p.cpus()));
  Line(out, "memory", FormatBytes(p.mem_available_bytes()) + " available of " + FormatBytes(p.mem_total_bytes()));
  if (p.gpus().empty()) Line(out, "gpu", "none found");
  for (const v1::PciGpu& g : p.gpus()) Line(out, "gpu", Gpu(g));
  if (!p.gpu_archs().empty()) {
    std::string archs;
    for (const std::string& arch : p.gpu_archs()) archs += (archs.empty() ? "" : ";") + arch;
    Line(out, "archs", archs);
  }
  Line(out, "driver", Driver(p));
  if (p.cuda_toolkits().empty()) Line(out, "cuda", "none");
  for (const v1::CudaToolkit& t : p.cuda_toolkits()) {
    Line(out, "cuda", t.version() + (t.build().empty() ? "" : " (" + t.build() + ")") + " " + t.path());
  }
  std::string uv = p.uv_version().empty() ? "not found" : p.uv_version();
  Line(out, "python", OrUnknown(p.python_version()) + ", uv " + uv);
  for (const v1::PythonVenv& v : p.venvs()) Line(out, "venv", Venv(v));
  if (!p.notes().empty()) out << "notes\n";
  for (const std::string& note : p.notes()) out << "  - " << EscapeForTerminal(note) << "\n";
  return out.str();
}

}  // namespace gpuctl::client
