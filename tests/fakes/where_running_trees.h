// Fixture trees of the machines sys::DetectWhereRunning tells apart, as their
// files look (the VM one is the CI machine of issue 24: a hybrid cgroup host
// with a hypervisor cpu flag and a /.dockerenv left in its image). Shared by
// the detector's tests and the test that health, probe and provisioning agree.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

#include "tests/fakes/temp_dir.h"

namespace gpuctl::testing {

// A NUL-separated block as in /proc/1/environ.
inline std::string Pid1Environ(std::initializer_list<std::string_view> entries) {
  std::string block;
  for (std::string_view e : entries) (block += e) += '\0';
  return block;
}

inline std::string CpuinfoWithFlags(std::string_view flags) {
  return "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Platinum 8480C\n"
         "flags\t\t: " + std::string(flags) + "\n\nprocessor\t: 1\nflags\t\t: " + std::string(flags) + "\n";
}
inline constexpr std::string_view kVmCpuFlags = "fpu vme de pse tsc msr pae mce cx8 apic sep hypervisor lahf_lm";
inline constexpr std::string_view kMetalCpuFlags = "fpu vme de pse tsc msr pae mce cx8 apic sep lahf_lm";

// proc/self/mountinfo with "/" on `fstype`, then the usual proc and sys mounts.
inline std::string MountinfoWithRoot(std::string_view fstype, std::string_view source) {
  return "27 1 254:0 / / rw,relatime shared:1 - " + std::string(fstype) + " " + std::string(source) + " rw\n"
         "28 27 0:5 / /proc rw,nosuid,nodev,noexec,relatime shared:2 - proc proc rw\n"
         "29 27 0:6 / /sys rw,nosuid,nodev,noexec,relatime shared:3 - sysfs sysfs rw\n";
}

// cgroup v1 (hybrid) with every hierarchy at `path`, as pid 1 sees it.
inline std::string CgroupV1At(std::string_view path) {
  std::string out;
  int id = 9;
  for (std::string_view c : {"name=systemd", "pids", "blkio", "freezer", "devices", "memory", "cpuset", "cpuacct", "cpu"}) {
    out += std::to_string(id--) + ":" + std::string(c) + ":" + std::string(path) + "\n";
  }
  return out + "0::" + std::string(path) + "\n";
}

// Docker on a cgroup v1 host: the marker, pid 1 under /docker/ID, an overlay root.
inline void WriteDockerV1Tree(const TempDir& dir) {
  dir.WriteFile(".dockerenv", "");
  dir.WriteFile("proc/1/cgroup", CgroupV1At("/docker/3f1c0ffee0ddba11"));
  dir.WriteFile("proc/1/sched", "python3 (1, #threads: 4)\n---------------------------------\n");
  dir.WriteFile("proc/self/mountinfo", MountinfoWithRoot("overlay", "overlay"));
  dir.WriteFile("proc/cpuinfo", CpuinfoWithFlags(kMetalCpuFlags));
}

// Docker on cgroup v2 with its own cgroup namespace (the default there): pid
// 1's cgroup reads "/", so only the marker and the overlay root tell. In a
// cloud VM: the cpu flag and DMI are the host's.
inline void WriteDockerV2InVmTree(const TempDir& dir) {
  dir.WriteFile(".dockerenv", "");
  dir.WriteFile("proc/1/cgroup", "0::/\n");
  dir.WriteFile("proc/self/mountinfo", MountinfoWithRoot("overlay", "overlay"));
  dir.WriteFile("proc/cpuinfo", CpuinfoWithFlags(kVmCpuFlags));
  dir.WriteFile("sys/class/dmi/id/sys_vendor", "QEMU\n");
  dir.WriteFile("sys/class/dmi/id/product_name", "Standard PC (Q35 + ICH9, 2009)\n");
}

// A Proxmox LXC guest on cgroup v2: container=lxc in pid 1's environment,
// pid 1 in init.scope of its own namespace, the container's disk as root.
inline void WriteLxcGuestV2Tree(const TempDir& dir) {
  dir.WriteFile("proc/1/environ", Pid1Environ({"container=lxc", "TERM=linux"}));
  dir.WriteFile("proc/1/cgroup", "0::/init.scope\n");
  dir.WriteFile("proc/self/mountinfo", MountinfoWithRoot("ext4", "/dev/mapper/pve-vm--101--disk--0"));
  dir.WriteFile("proc/cpuinfo", CpuinfoWithFlags(kMetalCpuFlags));
}

// An LXC guest on a cgroup v1 host without a cgroup namespace, as a user who
// cannot read pid 1's environment sees it: the /lxc/101 path tells.
inline void WriteLxcGuestV1Tree(const TempDir& dir) {
  dir.WriteFile("proc/1/cgroup", CgroupV1At("/lxc/101"));
  dir.WriteFile("proc/self/mountinfo", MountinfoWithRoot("zfs", "rpool/data/subvol-101-disk-0"));
  dir.WriteFile("proc/cpuinfo", CpuinfoWithFlags(kMetalCpuFlags));
}

// The machine of issue 24: a VM (hypervisor flag, no DMI exposed), hybrid
// cgroups with pid 1 at "/", ext4 on /dev/vda, and a stale /.dockerenv.
inline void WriteVmWithStaleDockerenvTree(const TempDir& dir) {
  dir.WriteFile(".dockerenv", "");
  dir.WriteFile("proc/1/cgroup", CgroupV1At("/"));
  dir.WriteFile("proc/1/sched", "process_api (1, #threads: 17)\n---------------------------------\n");
  dir.WriteFile("proc/self/mountinfo", MountinfoWithRoot("ext4", "/dev/vda"));
  dir.WriteFile("proc/cpuinfo", CpuinfoWithFlags(kVmCpuFlags));
}

// A KVM guest on cgroup v2: systemd's pid 1 in init.scope, DMI names KVM.
inline void WriteKvmVmV2Tree(const TempDir& dir) {
  dir.WriteFile("proc/1/environ", Pid1Environ({"HOME=/", "TERM=linux"}));
  dir.WriteFile("proc/1/cgroup", "0::/init.scope\n");
  dir.WriteFile("proc/self/mountinfo", MountinfoWithRoot("ext4", "/dev/vda1"));
  dir.WriteFile("proc/cpuinfo", CpuinfoWithFlags(kVmCpuFlags));
  dir.WriteFile("sys/class/dmi/id/sys_vendor", "Red Hat\n");
  dir.WriteFile("sys/class/dmi/id/product_name", "KVM\n");
}

// A bare-metal GPU server: no flag, no marker, a real board in DMI.
inline void WriteBareMetalTree(const TempDir& dir) {
  dir.WriteFile("proc/1/environ", Pid1Environ({"HOME=/", "TERM=linux"}));
  dir.WriteFile("proc/1/cgroup", "0::/init.scope\n");
  dir.WriteFile("proc/self/mountinfo", MountinfoWithRoot("ext4", "/dev/nvme0n1p2"));
  dir.WriteFile("proc/cpuinfo", CpuinfoWithFlags(kMetalCpuFlags));
  dir.WriteFile("sys/class/dmi/id/sys_vendor", "Supermicro\n");
  dir.WriteFile("sys/class/dmi/id/product_name", "SYS-821GE-TNHR\n");
}

}  // namespace gpuctl::testing
