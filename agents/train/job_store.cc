#include "agents/train/job_store.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "agents/sys/directory_listing.h"
#include "agents/sys/disk_space.h"
#include "agents/sys/files.h"
#include "agents/sys/remove_tree.h"
#include "common/json_text.h"

namespace gpuctl::train {
namespace {

// Far above any record (events are bounded by bytes), far below trouble.
constexpr size_t kMaxRecordBytes = 64 << 20;
// STATE_DIR/spares/NAME.json: space for the next record of job NAME, kept
// while the disk has room (beside the jobs, not in a job's directory, which
// holds only what the job's run wrote); the slack covers what an end adds
// (state, exit code, times, a reason).
constexpr size_t kSpareSlack = 4096;

// Temp files of a save an agent was killed in the middle of (only one agent
// uses a state directory, so at load none is in flight).
void RemoveStaleTempFiles(const std::string& dir) {
  for (const std::string& leaf : sys::ListDirectoryNames(dir)) {
    if (leaf.starts_with("job.json.tmp.")) (void)sys::RemoveFile(dir + "/" + leaf);
  }
}

}  // namespace

JobStore::JobStore(std::string state_dir)
    : jobs_dir_(state_dir + "/jobs"), spares_dir_(std::move(state_dir) + "/spares") {}

std::string JobStore::SparePath(const std::string& name) const { return spares_dir_ + "/" + name + ".json"; }

std::string JobStore::JobDir(const std::string& name) const { return jobs_dir_ + "/" + name; }
std::string JobStore::LogPath(const std::string& name) const { return JobDir(name) + "/output.log"; }
std::string JobStore::ExitPath(const std::string& name) const { return JobDir(name) + "/exit_status"; }

Status JobStore::Prepare(const std::string& name) const {
  if (Status s = ValidateJobName(name); !s.ok()) return s;
  if (Status s = sys::EnsureDir(spares_dir_, 0700); !s.ok()) return s;
  return sys::EnsureDir(JobDir(name), 0700);
}

Status JobStore::Save(const JobRecord& record) const {
  if (record.state == JobState::kUnreadable) {
    return FailedPrecondition("the record of job '" + record.spec.name + "' is unreadable and is not overwritten");
  }
  if (Status s = ValidateJobName(record.spec.name); !s.ok()) return s;
  const std::string path = JobDir(record.spec.name) + "/job.json";
  const std::string text = DumpJson(ToJson(record), 2) + "\n";
  Status saved = sys::WriteFileAtomic(path, text, 0600);
  if (saved.ok()) {
    // Room for the next save, set aside while there is room: a job's log
    // may fill the disk, and how it ended must still be recorded.
    if (Status s = sys::KeepSpareFile(SparePath(record.spec.name), text.size() + kSpareSlack); !s.ok()) {
      spdlog::debug("job '{}': no spare record space: {}", record.spec.name, s.message());
    }
    return saved;
  }
  // The disk is full: the spare's blocks take the record, but only a run's
  // end (how it ended is what must not be lost; progress can wait, and
  // would use up the spare before the end comes).
  const bool ended = !IsActive(record.state) && record.state != JobState::kQueued;
  if (ended && sys::IsOutOfSpace(saved) && sys::WriteFileFromSpare(SparePath(record.spec.name), path, text).ok()) {
    spdlog::warn("job '{}': {}; saved into its spare space instead", record.spec.name, saved.message());
    return Status::Ok();
  }
  return saved;
}

Result<JobRecord> JobStore::Load(const std::string& name) const {
  if (Status s = ValidateJobName(name); !s.ok()) return s;
  std::string path = JobDir(name) + "/job.json";
  Result<std::string> text = sys::ReadRegularFile(path, kMaxRecordBytes);
  if (!text.ok()) {
    if (text.status().code() == ErrorCode::kNotFound) {
      return NotFound("no job named '" + name + "' (see gpuctl train list)");
    }
    return InvalidArgument(text.status().message());
  }
  nlohmann::json doc = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return InvalidArgument(path + " is not valid JSON");
  Result<JobRecord> record = JobRecordFromJson(doc);
  if (!record.ok()) return record.status().Wrap(path);
  if (record->spec.name != name) {
    return InvalidArgument(path + " is the record of job '" + record->spec.name + "', not of '" + name + "'");
  }
  return record;
}

std::vector<JobRecord> JobStore::LoadAll() const {
  std::vector<JobRecord> records;
  for (const std::string& name : sys::ListDirectoryNames(jobs_dir_)) {
    if (!ValidateJobName(name).ok()) {
      spdlog::warn("ignoring {}: not a job name", jobs_dir_ + "/" + name);
      continue;
    }
    if (!sys::IsRealDirectory(JobDir(name))) continue;  // a link planted here is no job
    RemoveStaleTempFiles(JobDir(name));
    if (!sys::PathExists(JobDir(name) + "/job.json")) continue;
    Result<JobRecord> record = Load(name);
    if (record.ok()) {
      records.push_back(std::move(record).value());
      continue;
    }
    spdlog::warn("job '{}' has an unreadable record: {}", name, record.status().message());
    JobRecord unreadable;
    unreadable.spec.name = name;
    unreadable.run_id = "unknown";
    unreadable.state = JobState::kUnreadable;
    unreadable.state_reason = record.status().message() + "; remove it with: gpuctl train rm " + name;
    unreadable.log_path = LogPath(name);
    records.push_back(std::move(unreadable));
  }
  std::sort(records.begin(), records.end(),
            [](const JobRecord& a, const JobRecord& b) { return a.created_unix_ms < b.created_unix_ms; });
  return records;
}

Status JobStore::Remove(const std::string& name) const {
  if (Status s = ValidateJobName(name); !s.ok()) return s;
  if (Status s = sys::RemoveTree(JobDir(name)); !s.ok()) return s;  // links removed, never followed
  (void)sys::RemoveFile(SparePath(name));
  return Status::Ok();
}

}  // namespace gpuctl::train
