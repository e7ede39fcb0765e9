#include "agents/train/stop_escalation.h"

#include <signal.h>

#include <algorithm>

#include <spdlog/spdlog.h>

#include "agents/train/run_monitor.h"

namespace gpuctl::train {

StopEscalation::StopEscalation(RunMonitor& monitor, RunProcesses& processes)
    : monitor_(monitor), processes_(processes) {}

JobPart::TimePoint StopEscalation::DueAt(const JobEntry& entry, TimePoint now, int64_t now_unix_ms) {
  const JobRecord& r = entry.record;
  if ((!IsActive(r.state) && r.state != JobState::kUnreadable) || !r.stop_requested || !r.stop_deadline_unix_ms) {
    return TimePoint::max();
  }
  // After the SIGKILL, look again soon: the job is about to be gone.
  if (entry.kill_sent) return entry.recheck_at;
  return now + std::chrono::milliseconds(std::max<int64_t>(0, *r.stop_deadline_unix_ms - now_unix_ms));
}

JobPart::TimePoint StopEscalation::NextWake(const JobTable& table, TimePoint now) const {
  TimePoint wake = TimePoint::max();
  const int64_t now_ms = table.NowMs();
  table.ForEach([&](const JobEntry& entry) { wake = std::min(wake, DueAt(entry, now, now_ms)); });
  return wake;
}

void StopEscalation::Tick(JobTable& table, TimePoint now) {
  const int64_t now_ms = table.NowMs();
  table.ForEach([&](JobEntry& entry) {
    if (DueAt(entry, now, now_ms) <= now) monitor_.Refresh(entry, RunMonitor::kTickIngestBytes);
  });
}

bool StopEscalation::OnRefresh(JobTable& table, JobEntry& entry, int64_t now_unix_ms) {
  JobRecord& r = entry.record;
  if (IsActive(r.state) && r.stop_requested && r.stop_deadline_unix_ms && now_unix_ms >= *r.stop_deadline_unix_ms &&
      !entry.kill_sent) {
    spdlog::info("job '{}' still running past its stop deadline: SIGKILL", r.spec.name);
    processes_.Signal(r, SIGKILL);
    entry.kill_sent = true;
  }
  if (entry.kill_sent && IsActive(r.state)) entry.recheck_at = table.clock().SteadyNow() + std::chrono::milliseconds(50);
  return false;
}

}  // namespace gpuctl::train
