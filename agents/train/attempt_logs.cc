#include "agents/train/attempt_logs.h"

#include <algorithm>

#include "agents/train/checkpoint_relaunch.h"
#include "agents/train/oom_relaunch.h"

namespace gpuctl::train {
namespace {

// What the relaunch into attempt `n` changed: the changes the attempt before
// it holds.
std::vector<std::string> ChangesInto(const JobRecord& r, uint32_t n) {
  for (const AttemptRecord& a : r.attempts) {
    if (a.attempt + 1 == n) return a.changes;
  }
  return {};
}

AttemptLog EarlierAttemptLog(const JobRecord& r, const AttemptRecord& a) {
  AttemptLog log;
  log.attempt = a.attempt;
  log.run_id = a.run_id;
  log.path = a.log_path;
  log.whole = true;
  log.changes = ChangesInto(r, a.attempt);
  return log;
}

std::string AttemptsHeld(const JobRecord& r) {
  std::vector<uint32_t> held;
  for (const AttemptRecord& a : r.attempts) held.push_back(a.attempt);
  held.push_back(CurrentAttempt(r));
  std::sort(held.begin(), held.end());
  held.erase(std::unique(held.begin(), held.end()), held.end());
  if (held.size() == 1) return "it has attempt " + std::to_string(held[0]) + " only";
  // Contiguous from the first: "1-3"; otherwise listed.
  if (held.back() - held.front() + 1 == held.size()) {
    return "its attempts are " + std::to_string(held.front()) + "-" + std::to_string(held.back());
  }
  std::string list;
  for (uint32_t n : held) list += (list.empty() ? "" : ", ") + std::to_string(n);
  return "its attempts are " + list;
}

}  // namespace

uint32_t CurrentAttempt(const JobRecord& record) { return std::max<uint32_t>(record.spec.attempt, 1); }

Result<AttemptLog> FindAttemptLog(const JobRecord& r, uint32_t n) {
  const uint32_t current = CurrentAttempt(r);
  if (n == 0 || n == current) {
    AttemptLog log;
    log.attempt = current;
    log.run_id = r.run_id;
    log.path = r.log_path;
    log.queued = r.state == JobState::kQueued;
    if (log.queued) {
      log.path.clear();
      log.waiting_for = r.waiting_for;
    }
    log.changes = ChangesInto(r, current);
    return log;
  }
  for (const AttemptRecord& a : r.attempts) {
    if (a.attempt == n) return EarlierAttemptLog(r, a);
  }
  return NotFound("job '" + r.spec.name + "' has no attempt " + std::to_string(n) + ": " + AttemptsHeld(r) +
                  " (see gpuctl train status " + r.spec.name + ")");
}

std::optional<AttemptLog> FindAttemptByRun(const JobRecord& r, const std::string& run_id) {
  for (const AttemptRecord& a : r.attempts) {
    if (a.run_id == run_id) return EarlierAttemptLog(r, a);
  }
  return std::nullopt;
}

bool RelaunchPending(const JobRecord& record) {
  return OomRelaunch::Pending(record) || CheckpointRelaunch::Pending(record);
}

std::string KeptAsidePath(const AttemptLog& log) { return log.path + "." + log.run_id; }

}  // namespace gpuctl::train
