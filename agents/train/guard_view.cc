#include "agents/train/guard_view.h"

namespace gpuctl::train {

GuardView::GuardView(std::string default_cwd) : default_cwd_(std::move(default_cwd)) {}

std::vector<GuardedJob> GuardView::RunningJobs() const {
  std::lock_guard lock(mutex_);
  return running_;
}

void GuardView::MarkKilledByGuard(const std::string& run_id, const std::string& reason) {
  std::lock_guard lock(mutex_);
  guard_kills_[run_id] = reason;
}

void GuardView::MarkFailed(const std::string& run_id, const std::string& reason) {
  std::lock_guard lock(mutex_);
  failures_[run_id] = reason;
}

void GuardView::Update(JobTable& table) {
  std::vector<GuardedJob> running;
  table.ForEach([&](const JobEntry& entry) {
    const JobRecord& r = entry.record;
    if (!IsActive(r.state)) return;
    // A container job's memory is its command's, inside: guard that group.
    int64_t group = r.inner_pgid > 0 ? r.inner_pgid : r.pgid;
    running.push_back({r.spec.name, r.run_id, r.cgroup, group, r.spec.kind, r.spec.mem_limit_bytes,
                       r.spec.cwd.empty() ? default_cwd_ : r.spec.cwd, r.stop_requested});
  });
  std::lock_guard lock(mutex_);
  running_ = std::move(running);
}

GuardView::EndMarks GuardView::TakeMarks(const std::string& run_id) {
  EndMarks marks;
  std::lock_guard lock(mutex_);
  if (auto kill = guard_kills_.find(run_id); kill != guard_kills_.end()) {
    marks.guard_kill = kill->second;
    guard_kills_.erase(kill);
  }
  if (auto failed = failures_.find(run_id); failed != failures_.end()) {
    marks.failure = failed->second;
    failures_.erase(failed);
  }
  return marks;
}

}  // namespace gpuctl::train
