#include "agents/guard/decide.h"

#include <algorithm>
#include <cstdio>
#include <tuple>

#include "agents/guard/memory_budget.h"
#include "common/units.h"

namespace gpuctl::guard {
namespace {

std::string Percent(double value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", value);
  return buf;
}

}  // namespace

const char* GuardActionName(GuardAction action) {
  switch (action) {
    case GuardAction::kNone: return "none";
    case GuardAction::kWarn: return "warn";
    case GuardAction::kKill: return "kill";
  }
  return "none";
}

GuardDecision Decide(const DomainReading& reading, const GuardConfig& config) {
  GuardDecision d;
  d.available_bytes = reading.available_bytes;
  d.kill_below_bytes = BudgetOf(reading, config).reserve_bytes;
  d.warn_below_bytes = WarnLineBytes(config, reading.total_bytes);
  const std::string available = FormatBytes(reading.available_bytes);
  if (reading.available_bytes < d.kill_below_bytes) {
    d.action = GuardAction::kKill;
    d.reason = "available memory " + available + " is below the reserve " + FormatBytes(d.kill_below_bytes);
    return d;
  }
  if (reading.available_bytes < d.warn_below_bytes) {
    d.action = GuardAction::kWarn;
    d.reason = "available memory " + available + " is below the warn line " + FormatBytes(d.warn_below_bytes);
    return d;
  }
  double psi_line = PsiFullPercent(config);
  if (reading.psi_full_avg10 && *reading.psi_full_avg10 >= psi_line) {
    d.action = GuardAction::kWarn;
    d.reason = "memory pressure: all tasks stalled " + Percent(*reading.psi_full_avg10) +
               " of the last 10 s (warn at " + Percent(psi_line) + ")";
  }
  return d;
}

std::optional<std::string> WhyProtected(const ProcessInfo& process, const GuardConfig& config, int64_t agent_pid) {
  if (process.pid <= 0) return "invalid pid " + std::to_string(process.pid);
  if (process.pid == 1) return std::string("pid 1 (init)");
  if (process.exited()) return std::string("already exited");  // nothing to free; no exe either
  if (process.kernel_thread()) return "kernel thread " + process.comm;
  if (process.pid == agent_pid) return std::string("the agent itself");
  if (std::find(config.protected_names.begin(), config.protected_names.end(), process.comm) !=
      config.protected_names.end()) {
    return "protected process " + process.comm;
  }
  if (process.oom_score_adj <= -1000) return std::string("oom_score_adj -1000");
  return std::nullopt;
}

std::vector<ProcessInfo> WithinDomain(const std::vector<ProcessInfo>& processes, const GuardDomain& domain) {
  if (domain.kind == GuardDomain::Kind::kHost) return processes;
  std::string root = domain.cgroup;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  std::vector<ProcessInfo> inside;
  for (const ProcessInfo& p : processes) {
    const std::string& at = p.memory_cgroup;
    bool below = root == "/" ? !at.empty() : (at == root || at.starts_with(root + "/"));
    if (below) inside.push_back(p);
  }
  return inside;
}

std::optional<Victim> ChooseVictim(const std::vector<Candidate>& managed, const std::vector<ProcessInfo>& unmanaged,
                                   const GuardConfig& config, int64_t agent_pid) {
  const Candidate* job = nullptr;
  for (const Candidate& c : managed) {
    if (c.memory_bytes == 0) continue;  // killing it frees nothing
    if (job == nullptr || std::tie(c.memory_bytes, job->name) > std::tie(job->memory_bytes, c.name)) job = &c;
  }
  if (job != nullptr) {
    return Victim{Victim::Kind::kManagedJob, job->name, job->cgroup, job->pid, job->memory_bytes,
                  "managed job using the most memory (" + FormatBytes(job->memory_bytes) + ")"};
  }
  if (!config.guard_unmanaged) return std::nullopt;

  const ProcessInfo* best = nullptr;
  for (const ProcessInfo& p : unmanaged) {
    if (WhyProtected(p, config, agent_pid)) continue;
    // Higher score, then larger RSS, then the lower (older) pid.
    if (best == nullptr ||
        std::tie(p.oom_score, p.rss_bytes, best->pid) > std::tie(best->oom_score, best->rss_bytes, p.pid)) {
      best = &p;
    }
  }
  if (best == nullptr) return std::nullopt;
  return Victim{Victim::Kind::kUnmanagedProcess, best->comm, "", best->pid, best->rss_bytes,
                "unmanaged process with the highest oom_score (" + std::to_string(best->oom_score) + ", RSS " +
                    FormatBytes(best->rss_bytes) + ")"};
}

}  // namespace gpuctl::guard
