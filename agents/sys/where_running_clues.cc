// The reads behind DetectWhereRunning: each file once, nothing judged here.
#include <string_view>

#include "agents/sys/where_running.h"

namespace gpuctl::sys {
namespace {

std::string TrimClue(std::string_view s) {
  constexpr std::string_view kSpaces = " \t\r\n";
  size_t begin = s.find_first_not_of(kSpaces);
  if (begin == std::string_view::npos) return "";
  return std::string(s.substr(begin, s.find_last_not_of(kSpaces) - begin + 1));
}

// The container= entry of a NUL-separated environ block, or "".
std::string ContainerEnvOf(std::string_view block) {
  constexpr std::string_view kKey = "container=";
  while (!block.empty()) {
    size_t nul = block.find('\0');
    std::string_view entry = block.substr(0, nul);
    if (entry.starts_with(kKey)) return TrimClue(entry.substr(kKey.size()));
    if (nul == std::string_view::npos) break;
    block.remove_prefix(nul + 1);
  }
  return "";
}

// x86 lists `hypervisor` among every CPU's flags; the first flags line will do.
bool CpuFlagsSayHypervisor(std::string_view cpuinfo) {
  while (!cpuinfo.empty()) {
    size_t eol = cpuinfo.find('\n');
    std::string_view line = cpuinfo.substr(0, eol);
    if (line.starts_with("flags")) {
      size_t colon = line.find(':');
      if (colon == std::string_view::npos) return false;
      std::string_view flags = line.substr(colon + 1);
      while (!flags.empty()) {
        size_t space = flags.find(' ');
        if (flags.substr(0, space) == "hypervisor") return true;
        if (space == std::string_view::npos) break;
        flags.remove_prefix(space + 1);
      }
      return false;
    }
    if (eol == std::string_view::npos) break;
    cpuinfo.remove_prefix(eol + 1);
  }
  return false;
}

}  // namespace

std::string RootFsType(std::string_view mountinfo) {
  // ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER
  std::string fstype;
  while (!mountinfo.empty()) {
    size_t eol = mountinfo.find('\n');
    std::string_view line = mountinfo.substr(0, eol);
    std::vector<std::string_view> fields;
    while (!line.empty()) {
      size_t space = line.find(' ');
      if (space != 0) fields.push_back(line.substr(0, space));
      if (space == std::string_view::npos) break;
      line.remove_prefix(space + 1);
    }
    if (fields.size() > 5 && fields[4] == "/") {
      for (size_t i = 6; i + 1 < fields.size(); ++i) {
        if (fields[i] == "-") {
          fstype = std::string(fields[i + 1]);  // a later mount on "/" hides the earlier
          break;
        }
      }
    }
    if (eol == std::string_view::npos) break;
    mountinfo.remove_prefix(eol + 1);
  }
  return fstype;
}

std::optional<long> SchedPid(std::string_view sched) {
  std::string_view first = sched.substr(0, sched.find('\n'));
  // The command name may hold " (" itself: the pid follows the last one.
  size_t open = first.rfind(" (");
  if (open == std::string_view::npos) return std::nullopt;
  std::string_view rest = first.substr(open + 2);
  long pid = 0;
  size_t digits = 0;
  for (char c : rest) {
    if (c < '0' || c > '9' || digits >= 10) break;
    pid = pid * 10 + (c - '0');
    ++digits;
  }
  if (digits == 0 || digits >= rest.size() || rest[digits] != ',') return std::nullopt;
  return pid;
}

WhereClues ReadWhereClues(const HostFs& fs) {
  WhereClues clues;
  clues.host_container_manager = TrimClue(fs.ReadFile("run/host/container-manager").value_or(""));
  clues.systemd_container = TrimClue(fs.ReadFile("run/systemd/container").value_or(""));
  if (Result<std::string> environ = fs.ReadFile("proc/1/environ"); environ.ok()) {
    clues.pid1_environ_readable = true;
    clues.pid1_container_env = ContainerEnvOf(*environ);
  }
  clues.pid1_cgroups = ParseProcCgroup(fs.ReadFile("proc/1/cgroup").value_or("")).value_or({});
  clues.pid1_sched_pid = SchedPid(fs.ReadFile("proc/1/sched").value_or(""));
  clues.root_fstype = RootFsType(fs.ReadFile("proc/self/mountinfo").value_or(""));
  clues.dockerenv = fs.Exists(".dockerenv");
  clues.containerenv = fs.Exists("run/.containerenv");
  clues.dev_lxd = fs.Exists("dev/lxd");
  clues.kubernetes_service_account = fs.Exists("var/run/secrets/kubernetes.io");
  clues.proc_vz = fs.Exists("proc/vz");
  clues.proc_bc = fs.Exists("proc/bc");
  clues.cpu_hypervisor_flag = CpuFlagsSayHypervisor(fs.ReadFile("proc/cpuinfo").value_or(""));
  clues.dmi_sys_vendor = TrimClue(fs.ReadFile("sys/class/dmi/id/sys_vendor").value_or(""));
  clues.dmi_product_name = TrimClue(fs.ReadFile("sys/class/dmi/id/product_name").value_or(""));
  clues.sys_hypervisor_type = TrimClue(fs.ReadFile("sys/hypervisor/type").value_or(""));
  return clues;
}

}  // namespace gpuctl::sys
