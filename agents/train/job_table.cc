#include "agents/train/job_table.h"

#include <algorithm>

#include <spdlog/spdlog.h>

namespace gpuctl::train {
namespace {

// Metrics-only progress is saved at most this often; events and ends at once.
constexpr int64_t kMetricsSaveEveryMs = 2000;
constexpr auto kEndCheckInterval = std::chrono::milliseconds(200);

}  // namespace

JobTable::JobTable(const JobStore& store, const sys::Clock& clock, JobEventSink publish)
    : store_(store), clock_(clock), publish_(std::move(publish)) {}

int64_t JobTable::NowMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock_.WallNow().time_since_epoch()).count();
}

JobEntry& JobTable::Put(JobRecord record) {
  auto entry = std::make_unique<JobEntry>();
  entry->record = std::move(record);
  entry->saved_offset = entry->record.parsed_offset;
  JobEntry& ref = *entry;
  entries_[ref.record.spec.name] = std::move(entry);
  return ref;
}

JobEntry* JobTable::Find(const std::string& name) {
  auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : it->second.get();
}

void JobTable::Erase(const std::string& name) {
  entries_.erase(name);
  {
    std::lock_guard lock(snapshot_mutex_);
    snapshot_.erase(name);
    end_checked_at_.erase(name);
  }
  snapshot_changed_.notify_all();
}

void JobTable::ForEach(const std::function<void(JobEntry&)>& visit) {
  for (auto& [name, entry] : entries_) visit(*entry);
}

void JobTable::ForEach(const std::function<void(const JobEntry&)>& visit) const {
  for (const auto& [name, entry] : entries_) visit(*entry);
}

std::vector<std::string> JobTable::Names() const {
  std::vector<std::string> names;
  for (const auto& [name, entry] : entries_) names.push_back(name);
  return names;
}

Status JobTable::Save(JobEntry& entry) {
  Status s = store_.Save(entry.record);
  if (s.ok()) {
    entry.last_save_ms = NowMs();
    entry.saved_offset = entry.record.parsed_offset;
  } else {
    spdlog::error("saving job '{}': {}", entry.record.spec.name, s.message());
  }
  return s;
}

bool JobTable::ProgressSaveDue(const JobEntry& entry, int64_t now_unix_ms) const {
  return entry.record.parsed_offset != entry.saved_offset && now_unix_ms - entry.last_save_ms >= kMetricsSaveEveryMs;
}

void JobTable::Publish(const JobEntry& entry) {
  auto copy = std::make_shared<const JobRecord>(entry.record);
  {
    std::lock_guard lock(snapshot_mutex_);
    snapshot_[entry.record.spec.name] = std::move(copy);
  }
  snapshot_changed_.notify_all();
}

void JobTable::PublishEvent(const std::string& kind, const JobRecord& record, const std::string& message,
                            nlohmann::json fields) {
  if (!publish_) return;
  if (!fields.is_object()) fields = nlohmann::json::object();
  fields["run_id"] = record.run_id;
  publish_(kind, record.spec.name, message, std::move(fields));
}

std::shared_ptr<const JobRecord> JobTable::Snapshot(const std::string& name) const {
  std::lock_guard lock(snapshot_mutex_);
  auto it = snapshot_.find(name);
  return it == snapshot_.end() ? nullptr : it->second;
}

std::vector<JobRecord> JobTable::SnapshotAll() const {
  std::vector<JobRecord> out;
  {
    std::lock_guard lock(snapshot_mutex_);
    for (const auto& [name, record] : snapshot_) out.push_back(*record);
  }
  std::sort(out.begin(), out.end(),
            [](const JobRecord& a, const JobRecord& b) { return a.created_unix_ms < b.created_unix_ms; });
  return out;
}

void JobTable::WaitForEnd(const std::string& name, std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(snapshot_mutex_);
  clock_.WaitUntil(lock, snapshot_changed_, deadline, [&] {
    auto it = snapshot_.find(name);
    return released_ || it == snapshot_.end() ||
           (!IsActive(it->second->state) &&
            !(it->second->state == JobState::kUnreadable && it->second->stop_requested));
  });
}

void JobTable::ReleaseWaiters() {
  {
    std::lock_guard lock(snapshot_mutex_);
    released_ = true;
  }
  snapshot_changed_.notify_all();
}

bool JobTable::EndCheckDue(const std::string& name) {
  // Real time, not clock_: this only limits work, and a fake clock that
  // stands still must not stop followers from seeing an end.
  static const sys::RealClock real_clock;
  const auto now = real_clock.SteadyNow();
  std::lock_guard lock(snapshot_mutex_);
  auto [it, added] = end_checked_at_.try_emplace(name, now);
  if (added) return true;
  if (now - it->second < kEndCheckInterval) return false;
  it->second = now;
  return true;
}

}  // namespace gpuctl::train
