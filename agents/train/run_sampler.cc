#include "agents/train/run_sampler.h"

#include <charconv>
#include <map>
#include <set>

#include "agents/sys/proc_stat.h"
#include "agents/sys/proc_tree.h"

namespace gpuctl::train {
namespace {

std::optional<int> RankFromEnvironment(const std::string& environ) {
  for (const std::string& entry : SplitNulFields(environ)) {
    if (entry.rfind("RANK=", 0) != 0) continue;
    int rank = -1;
    const char* begin = entry.data() + 5;
    const char* end = entry.data() + entry.size();
    auto [stop, err] = std::from_chars(begin, end, rank);
    if (err == std::errc() && stop == end && rank >= 0) return rank;
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::string> SplitNulFields(const std::string& text) {
  std::vector<std::string> fields;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\0', at);
    if (end == std::string::npos) end = text.size();
    fields.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return fields;
}

ProcRunSampler::ProcRunSampler(const sys::HostFs& fs, sys::CgroupDriver* cgroups, const sys::Clock& clock)
    : fs_(fs), cgroups_(cgroups), clock_(clock) {}

const std::map<int64_t, sys::ProcStat>& ProcRunSampler::Scan() {
  const auto now = clock_.SteadyNow();
  if (scanned_at_ && now - *scanned_at_ < kScanReuse) return stats_;
  scanned_at_ = now;
  stats_.clear();
  Result<std::vector<int64_t>> pids = sys::ListPids(fs_);
  if (!pids.ok()) return stats_;
  for (int64_t pid : *pids) {
    Result<std::string> stat_text = fs_.ReadFile("proc/" + std::to_string(pid) + "/stat");
    if (!stat_text.ok()) continue;  // gone meanwhile
    Result<sys::ProcStat> stat = sys::ParseProcStat(*stat_text);
    if (stat.ok() && !stat->exited()) stats_.emplace(pid, std::move(*stat));
  }
  return stats_;
}

std::vector<RunProcess> ProcRunSampler::Sample(const JobRecord& r, bool details) {
  std::set<int64_t> in_cgroup;
  if (!r.cgroup.empty() && cgroups_) {
    Result<std::vector<int64_t>> procs = cgroups_->Processes(r.cgroup);
    if (procs.ok()) in_cgroup.insert(procs->begin(), procs->end());
  }
  // Every live process's stat (one scan for all runs sampled together),
  // then the run's: its cgroup's, its groups', and every descendant of
  // those (torchrun starts its workers in sessions of their own).
  const std::map<int64_t, sys::ProcStat>& stats = Scan();
  std::set<int64_t> ours;
  for (const auto& [pid, stat] : stats) {
    if (in_cgroup.count(pid) > 0 || (r.pgid > 0 && stat.pgrp == r.pgid) ||
        (r.inner_pgid > 0 && stat.pgrp == r.inner_pgid) || (r.inner_pid > 0 && pid == r.inner_pid) ||
        (r.pid > 0 && pid == r.pid && (!r.pid_start_time || stat.start_time_ticks == *r.pid_start_time))) {
      ours.insert(pid);
    }
  }
  // Descendants: a child's pid is usually above its parent's, but pids wrap,
  // so repeat until nothing is added (bounded by the number of processes).
  for (bool added = true; added;) {
    added = false;
    for (const auto& [pid, stat] : stats) {
      if (!ours.count(pid) && ours.count(stat.ppid)) added = ours.insert(pid).second || added;
    }
  }
  std::vector<RunProcess> found;
  for (int64_t pid : ours) {
    const sys::ProcStat& stat = stats.at(pid);
    RunProcess p;
    p.pid = pid;
    p.comm = stat.comm;
    p.state = stat.state;
    p.cpu_ticks = stat.utime_ticks + stat.stime_ticks;
    if (details) {
      const std::string dir = "proc/" + std::to_string(pid);
      if (Result<std::string> cmdline = fs_.ReadFile(dir + "/cmdline"); cmdline.ok()) p.argv = SplitNulFields(*cmdline);
      if (Result<std::string> environ = fs_.ReadFile(dir + "/environ"); environ.ok()) {
        p.rank = RankFromEnvironment(*environ);
      }
    }
    found.push_back(std::move(p));
  }
  return found;
}

}  // namespace gpuctl::train
