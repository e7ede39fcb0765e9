#include "agents/guard/process_scan.h"

#include <charconv>
#include <optional>
#include <string>
#include <utility>

#include "agents/sys/proc_parsers.h"
#include "agents/sys/proc_stat.h"
#include "agents/sys/proc_status.h"
#include "agents/sys/proc_tree.h"
#include "agents/sys/text_fields.h"

namespace gpuctl::guard {
namespace {

// Kernel files end in a newline; a number is the trimmed text.
template <typename T>
std::optional<T> ToTrimmedNumber(std::string_view s) {
  return sys::ToNumber<T>(sys::Trim(s));
}

Result<int64_t> ReadNumber(const sys::HostFs& fs, const std::string& relative) {
  Result<std::string> text = fs.ReadFile(relative);
  if (!text.ok()) return text.status();
  std::optional<int64_t> n = ToTrimmedNumber<int64_t>(*text);
  if (!n) return InvalidArgument(fs.Path(relative) + ": expected a number, got '" + std::string(sys::Trim(*text)) + "'");
  return *n;
}

}  // namespace

std::string MemoryCgroupOf(std::string_view proc_cgroup) {
  Result<std::vector<sys::CgroupEntry>> entries = sys::ParseProcCgroup(proc_cgroup);
  if (!entries.ok()) return "";
  std::string unified;
  for (const sys::CgroupEntry& e : *entries) {
    for (const std::string& c : e.controllers) {
      if (c == "memory") return e.path;  // v1 memory controller
    }
    if (e.hierarchy_id == 0) unified = e.path;
  }
  return unified;
}

Result<ProcessInfo> ReadProcess(const sys::HostFs& fs, int64_t pid) {
  const std::string dir = "proc/" + std::to_string(pid) + "/";
  Result<std::string> stat_text = fs.ReadFile(dir + "stat");
  if (!stat_text.ok()) return stat_text.status();
  Result<sys::ProcStat> stat = sys::ParseProcStat(*stat_text);
  if (!stat.ok()) return stat.status().Wrap(fs.Path(dir + "stat"));
  Result<std::string> status_text = fs.ReadFile(dir + "status");
  if (!status_text.ok()) return status_text.status();
  // No VmRSS line (kernel threads, zombies): nothing resident to free.
  Result<std::optional<uint64_t>> rss = sys::ParseResidentBytes(*status_text);
  if (!rss.ok()) return rss.status().Wrap(fs.Path(dir + "status"));
  Result<int64_t> score = ReadNumber(fs, dir + "oom_score");
  if (!score.ok()) return score.status();
  Result<int64_t> adj = ReadNumber(fs, dir + "oom_score_adj");
  if (!adj.ok()) return adj.status();

  ProcessInfo info;
  info.pid = stat->pid;
  info.ppid = stat->ppid;
  info.comm = stat->comm;
  info.state = stat->state;
  info.flags = stat->flags;
  info.has_executable = sys::HasExecutable(fs, pid);
  info.rss_bytes = rss->value_or(0);
  info.oom_score = *score;
  info.oom_score_adj = *adj;
  if (Result<std::string> cgroups = fs.ReadFile(dir + "cgroup"); cgroups.ok()) {
    info.memory_cgroup = MemoryCgroupOf(*cgroups);
  }
  return info;
}

Result<std::vector<ProcessInfo>> ScanProcesses(const sys::HostFs& fs) {
  Result<std::vector<int64_t>> pids = sys::ListPids(fs);
  if (!pids.ok()) return pids.status();
  std::vector<ProcessInfo> processes;
  processes.reserve(pids->size());
  for (int64_t pid : *pids) {
    Result<ProcessInfo> info = ReadProcess(fs, pid);
    if (info.ok()) processes.push_back(std::move(*info));
  }
  return processes;
}

}  // namespace gpuctl::guard
