// The weighing of where_running.h's clues: pure, so every shape is a unit test.
#include "agents/sys/where_running.h"

#include <string_view>

namespace gpuctl::sys {
namespace {

// systemd's names, as in run/host/container-manager, run/systemd/container and
// container=: "docker", "podman", "lxc", "lxc-libvirt", "systemd-nspawn", "wsl"...
WhereKind KindFromManagerName(std::string_view name) {
  if (name == "docker") return WhereKind::kDocker;
  if (name == "podman") return WhereKind::kPodman;
  if (name == "lxc") return WhereKind::kLxc;
  return WhereKind::kOtherContainer;
}

// Without a cgroup namespace, pid 1 of a container sits in its runtime's
// cgroup: /lxc/101, /lxc.payload.c1, /docker/ID, /system.slice/docker-ID.scope,
// /machine.slice/libpod-ID.scope, /kubepods/..., crio-ID.scope.
std::optional<WhereKind> KindFromCgroupPath(std::string_view path) {
  auto has = [path](std::string_view part) { return path.find(part) != std::string_view::npos; };
  if (has("/lxc/") || has("/lxc.payload")) return WhereKind::kLxc;
  if (has("/docker/") || has("/docker-") || has("/actions_job/")) return WhereKind::kDocker;
  if (has("/libpod-") || has("/libpod_parent")) return WhereKind::kPodman;
  if (has("/kubepods") || has("/crio-") || has("/cri-containerd-")) return WhereKind::kOtherContainer;
  return std::nullopt;
}

// Where the host's own pid 1 lives: the root, or systemd's init.scope.
bool IsHostInitCgroup(std::string_view path) { return path == "/" || path == "/init.scope"; }

bool IsOverlayRoot(std::string_view fstype) {
  return fstype == "overlay" || fstype == "aufs" || fstype == "fuse.fuse-overlayfs";
}

struct HypervisorName {
  std::string name;
  bool decides = false;  // false: the name is also a bare-metal machine's (EC2 .metal)
};

// systemd's DMI table, in words: product name first (more specific), then vendor.
HypervisorName HypervisorFromDmi(const WhereClues& c) {
  struct Entry {
    std::string_view needle;
    std::string_view name;
    bool decides;
  };
  static constexpr Entry kTable[] = {
      {"KVM", "KVM", true},           {"OpenStack", "KVM", true},        {"KubeVirt", "KVM", true},
      {"QEMU", "QEMU", true},         {"VMware", "VMware", true},        {"VMW", "VMware", true},
      {"innotek GmbH", "VirtualBox", true}, {"VirtualBox", "VirtualBox", true}, {"Xen", "Xen", true},
      {"Bochs", "Bochs", true},       {"Parallels", "Parallels", true},  {"BHYVE", "bhyve", true},
      {"Google Compute Engine", "Google Compute Engine", true},
      {"Virtual Machine", "Hyper-V", true},  // Microsoft Corporation's product name
      {"Amazon EC2", "Amazon EC2", false},
  };
  for (const std::string* field : {&c.dmi_product_name, &c.dmi_sys_vendor}) {
    for (const Entry& e : kTable) {
      if (field->find(e.needle) != std::string::npos) return {std::string(e.name), e.decides};
    }
  }
  if (c.sys_hypervisor_type == "xen") return {"Xen", false};  // dom0 has it too
  return {};
}

std::string Pid1CgroupText(const std::vector<CgroupEntry>& cgroups) {
  // The v2 line (hierarchy 0) is the one that counts on a v2 or hybrid host.
  for (const CgroupEntry& e : cgroups) {
    if (e.hierarchy_id == 0) return "pid 1 cgroup " + e.path;
  }
  return "pid 1 cgroup " + cgroups.front().path;
}

}  // namespace

const char* WhereKindName(WhereKind kind) {
  switch (kind) {
    case WhereKind::kBareMetal: return "bare-metal";
    case WhereKind::kVm: return "vm";
    case WhereKind::kDocker: return "docker";
    case WhereKind::kPodman: return "podman";
    case WhereKind::kLxc: return "lxc";
    case WhereKind::kOtherContainer: return "container";
  }
  return "container";
}

WhereRunning DecideWhereRunning(const WhereClues& c) {
  std::vector<std::string> decisive;  // each alone says "container"
  std::optional<WhereKind> named;     // the kind the first naming clue gives
  auto decide = [&](std::optional<WhereKind> kind, std::string why) {
    if (kind && !named) named = kind;
    decisive.push_back(std::move(why));
  };
  if (!c.host_container_manager.empty()) {
    decide(KindFromManagerName(c.host_container_manager), "/run/host/container-manager says " + c.host_container_manager);
  }
  if (!c.systemd_container.empty()) {
    decide(KindFromManagerName(c.systemd_container), "/run/systemd/container says " + c.systemd_container);
  }
  if (!c.pid1_container_env.empty()) {
    decide(KindFromManagerName(c.pid1_container_env), "pid 1 environment container=" + c.pid1_container_env);
  }
  if (c.proc_vz && !c.proc_bc) decide(WhereKind::kOtherContainer, "/proc/vz without /proc/bc (OpenVZ)");
  bool pid1_in_unnamed_cgroup = false;
  for (const CgroupEntry& e : c.pid1_cgroups) {
    if (std::optional<WhereKind> kind = KindFromCgroupPath(e.path)) {
      decide(kind, "pid 1 cgroup " + e.path);
      break;
    }
    pid1_in_unnamed_cgroup = pid1_in_unnamed_cgroup || !IsHostInitCgroup(e.path);
  }
  if (c.pid1_sched_pid && *c.pid1_sched_pid != 1) {
    decide(std::nullopt, "pid 1 is pid " + std::to_string(*c.pid1_sched_pid) + " outside (/proc/1/sched)");
  }

  // Hints: a marker names a kind but can be stale in an image; the others say
  // how this run is set up now but also occur outside containers.
  std::vector<std::string> markers;
  std::optional<WhereKind> marked;
  auto mark = [&](bool present, WhereKind kind, const char* path) {
    if (!present) return;
    if (!marked) marked = kind;
    markers.emplace_back(path);
  };
  mark(c.dockerenv, WhereKind::kDocker, "/.dockerenv");
  mark(c.containerenv, WhereKind::kPodman, "/run/.containerenv");
  mark(c.dev_lxd, WhereKind::kLxc, "/dev/lxd");
  mark(c.kubernetes_service_account, WhereKind::kOtherContainer, "/var/run/secrets/kubernetes.io");
  std::vector<std::string> setup_hints;
  if (IsOverlayRoot(c.root_fstype)) setup_hints.push_back("root fs " + c.root_fstype);
  if (pid1_in_unnamed_cgroup && decisive.empty()) setup_hints.push_back(Pid1CgroupText(c.pid1_cgroups));

  const bool container =
      !decisive.empty() || (!setup_hints.empty() && markers.size() + setup_hints.size() >= 2);
  const HypervisorName dmi = HypervisorFromDmi(c);
  const bool vm_clue = c.cpu_hypervisor_flag || dmi.decides;

  WhereRunning out;
  if (container) {
    out.kind = named.value_or(marked.value_or(WhereKind::kOtherContainer));
    out.evidence = decisive;
    for (std::string& hint : setup_hints) out.evidence.push_back(std::move(hint));
    for (const std::string& marker : markers) out.evidence.push_back(marker);
    if (vm_clue) {
      out.hypervisor = dmi.name;
      out.evidence.emplace_back(c.cpu_hypervisor_flag ? "cpu flag hypervisor (the host is a VM)"
                                                      : "DMI names " + dmi.name + " (the host is a VM)");
    }
    return out;
  }

  out.kind = vm_clue ? WhereKind::kVm : WhereKind::kBareMetal;
  if (vm_clue) out.hypervisor = dmi.name;
  if (c.cpu_hypervisor_flag) out.evidence.emplace_back("cpu flag hypervisor");
  if (!dmi.name.empty()) {
    std::string dmi_text = c.dmi_sys_vendor.empty() ? c.sys_hypervisor_type : c.dmi_sys_vendor;
    if (!c.dmi_product_name.empty()) dmi_text += " " + c.dmi_product_name;
    out.evidence.push_back("DMI " + dmi_text);
  }
  if (!vm_clue) out.evidence.emplace_back("no hypervisor flag, no DMI VM name");
  if (!c.pid1_cgroups.empty()) out.evidence.push_back(Pid1CgroupText(c.pid1_cgroups));
  if (!c.root_fstype.empty()) out.evidence.push_back("root fs " + c.root_fstype);
  for (const std::string& marker : markers) out.evidence.push_back(marker + " ignored: nothing else says container");
  if (!c.pid1_environ_readable) out.evidence.emplace_back("/proc/1/environ unreadable");
  return out;
}

}  // namespace gpuctl::sys
