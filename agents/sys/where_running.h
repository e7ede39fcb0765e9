// Where the agent runs: bare metal, a VM, or a container (Docker, Podman, an
// LXC/LXD guest, another). The one answer health, probe and provisioning give.
//
// Reading and deciding are apart: ReadWhereClues collects what the files say
// (under a HostFs root, so tests use fixture trees), DecideWhereRunning weighs
// it without touching anything. The weighing, and why:
//   - Decisive for a container: what a runtime or systemd writes at run time
//     (run/host/container-manager, run/systemd/container, container= in pid 1's
//     environment), pid 1's cgroup named after a runtime (/docker/ID, /lxc/101,
//     libpod-ID.scope, kubepods...), pid 1 not being pid 1 on the host
//     (proc/1/sched), OpenVZ's proc/vz without proc/bc.
//   - Hints, which decide only together with another clue: marker files an
//     image can carry stale (.dockerenv, run/.containerenv, dev/lxd, a
//     Kubernetes service account), an overlay root (also Fedora's composefs and
//     live systems), pid 1 in an unnamed cgroup other than / and /init.scope.
//     A stale /.dockerenv in a VM's image is one hint: not a container.
//   - A VM: the cpu flag `hypervisor`, or DMI names a virtual machine (KVM,
//     QEMU, VMware...). A container in a VM is a container: the hypervisor is
//     kept as the host's.
//   - Otherwise bare metal.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "agents/sys/host_fs.h"
#include "agents/sys/proc_parsers.h"

namespace gpuctl::sys {

enum class WhereKind { kBareMetal, kVm, kDocker, kPodman, kLxc, kOtherContainer };

// "bare-metal", "vm", "docker", "podman", "lxc", "container"
const char* WhereKindName(WhereKind kind);

struct WhereRunning {
  WhereKind kind = WhereKind::kBareMetal;
  // "KVM", "VMware", "Xen"...: the VM's, or for a container in a VM its host's;
  // empty when unknown (the cpu flag alone does not name it) or none.
  std::string hypervisor;
  // What decided it, short, most telling first: "pid 1 cgroup /docker/0123abcd",
  // "cpu flag hypervisor", "/.dockerenv ignored: nothing else says container".
  std::vector<std::string> evidence;

  // A container never loads a kernel module: provisioning gives it the guest plan.
  bool container() const { return kind != WhereKind::kBareMetal && kind != WhereKind::kVm; }
};

// What the files say, unjudged. Empty strings and false: absent or unreadable.
struct WhereClues {
  std::string host_container_manager;  // run/host/container-manager
  std::string systemd_container;       // run/systemd/container
  std::string pid1_container_env;      // container= in proc/1/environ
  bool pid1_environ_readable = false;  // root-only; unreadable under some sandboxes
  std::vector<CgroupEntry> pid1_cgroups;  // proc/1/cgroup, v1 and v2 lines
  std::optional<long> pid1_sched_pid;  // the pid in proc/1/sched's first line
  std::string root_fstype;             // "/" in proc/self/mountinfo: "ext4", "overlay"
  bool dockerenv = false;              // /.dockerenv
  bool containerenv = false;           // run/.containerenv (Podman)
  bool dev_lxd = false;                // dev/lxd (LXD's guest API; LXD VMs have it too)
  bool kubernetes_service_account = false;  // var/run/secrets/kubernetes.io
  bool proc_vz = false;                // proc/vz: OpenVZ, host or container
  bool proc_bc = false;                // proc/bc: only an OpenVZ host has it
  bool cpu_hypervisor_flag = false;    // `hypervisor` in proc/cpuinfo's flags
  std::string dmi_sys_vendor;          // sys/class/dmi/id/sys_vendor
  std::string dmi_product_name;        // sys/class/dmi/id/product_name
  std::string sys_hypervisor_type;     // sys/hypervisor/type: "xen"
};

WhereClues ReadWhereClues(const HostFs& fs);
WhereRunning DecideWhereRunning(const WhereClues& clues);
inline WhereRunning DetectWhereRunning(const HostFs& fs) { return DecideWhereRunning(ReadWhereClues(fs)); }

// The filesystem type of the last mount on "/" in a mountinfo text, "" if none.
std::string RootFsType(std::string_view mountinfo);
// The pid in "comm (PID, #threads: N)", the first line of /proc/PID/sched.
std::optional<long> SchedPid(std::string_view sched);

}  // namespace gpuctl::sys
