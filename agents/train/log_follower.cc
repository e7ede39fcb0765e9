#include "agents/train/log_follower.h"

#include <algorithm>

#include "agents/sys/confined_root.h"
#include "agents/sys/files.h"

namespace gpuctl::train {

Result<uint64_t> TailStartOffset(const std::string& path, uint32_t lines) {
  Result<uint64_t> size = sys::RegularFileSize(path);
  if (!size.ok()) return size.status();
  if (lines == 0 || *size == 0) return *size;
  constexpr uint64_t kBlock = 64 * 1024;
  uint64_t end = *size;
  // A final line without '\n' is a line too; a final '\n' only ends the last one.
  uint32_t newlines_to_pass = lines;
  Result<std::string> last = sys::ReadRegularFileRange(path, end - 1, 1);
  if (last.ok() && *last == "\n") ++newlines_to_pass;
  while (end > 0) {
    uint64_t start = end > kBlock ? end - kBlock : 0;
    Result<std::string> block = sys::ReadRegularFileRange(path, start, static_cast<size_t>(end - start));
    if (!block.ok()) return block.status();
    for (size_t i = block->size(); i > 0; --i) {
      if ((*block)[i - 1] == '\n' && --newlines_to_pass == 0) return start + i;
    }
    end = start;
  }
  return uint64_t{0};
}

LogFollower::LogFollower(JobSupervisor& jobs, LogFollowOptions options, std::string path, uint64_t offset,
                         bool ended)
    : jobs_(&jobs), options_(std::move(options)), path_(std::move(path)), offset_(offset), ended_(ended) {}

Result<LogFollower> LogFollower::Open(JobSupervisor& jobs, LogFollowOptions options) {
  if (options.across_attempts || options.attempt != 0) return OpenAttempt(jobs, std::move(options));
  Result<LogSource> source = jobs.GetLogSource(options.job);
  if (!source.ok()) return source.status();
  uint64_t offset = options.from_offset;
  if (offset == 0 && options.tail_lines) {
    Result<uint64_t> start = TailStartOffset(source->path, *options.tail_lines);
    if (start.ok()) offset = *start;
  }
  return LogFollower(jobs, std::move(options), source->path, offset, source->ended);
}

Result<LogStep> LogFollower::ReadChunk() const {
  LogStep chunk{LogStep::Kind::kData, offset_, {}};
  if (options_.local_ranges && !sys::FindConfinedRoot(path_)) {
    Result<sys::FileIdentity> file = sys::RegularFileIdentity(path_);
    if (!file.ok()) {
      if (file.status().code() == ErrorCode::kNotFound) return chunk;
      return file.status();
    }
    if (file->size > offset_) {
      chunk.local = LogStep::LocalRange{path_, file->device, file->inode,
                                        std::min(file->size - offset_, options_.local_range_bytes)};
    }
    return chunk;
  }
  Result<std::string> data = sys::ReadRegularFileRange(path_, offset_, options_.chunk_bytes);
  if (!data.ok() && data.status().code() != ErrorCode::kNotFound) return data.status();
  if (data.ok()) chunk.data = std::move(data).value();
  return chunk;
}

LogStep LogFollower::Take(LogStep chunk) {
  offset_ += chunk.size();
  return chunk;
}

Result<LogStep> LogFollower::Next() {
  if (attempt_) return NextOfAttempt();
  // Two rounds at most: when the job turns out to have ended, one more read
  // picks up the bytes it wrote between our read and its exit.
  for (int round = 0; round < 2; ++round) {
    Result<LogStep> chunk = ReadChunk();
    if (!chunk.ok()) return chunk.status();
    if (chunk->size() > 0) return Take(std::move(chunk).value());
    if (!options_.follow) return LogStep{LogStep::Kind::kDone, offset_, {}};
    // Shorter than what was handed over: cut (copytruncate keeps the inode
    // and cuts to 0). Going on from the old offset would hand over the new
    // content from its middle (a torn line, the lines before it lost), so
    // go on from its start, as tail -F does, and say so.
    if (Result<uint64_t> size = sys::RegularFileSize(path_); size.ok() && *size < offset_) {
      offset_ = 0;
      Result<LogStep> fresh = ReadChunk();
      if (!fresh.ok()) return fresh.status();
      LogStep step = Take(std::move(fresh).value());
      step.truncated = true;
      return step;
    }
    if (ended_) return LogStep{LogStep::Kind::kDone, offset_, {}};
    Result<LogSource> now = jobs_->GetLogSource(options_.job);
    if (!now.ok()) return now.status();
    if (!now->ended) return LogStep{LogStep::Kind::kWait, offset_, {}};
    ended_ = true;
  }
  return LogStep{LogStep::Kind::kDone, offset_, {}};
}

// --- By attempt ---

Result<LogFollower> LogFollower::OpenAttempt(JobSupervisor& jobs, LogFollowOptions options) {
  Result<JobRecord> record = jobs.GetJob(options.job);
  if (!record.ok()) return record.status();
  Result<AttemptLog> log = FindAttemptLog(*record, options.attempt);
  if (!log.ok()) return log.status();
  uint64_t offset = options.from_offset;
  if (offset == 0 && options.tail_lines && !log->queued) {
    Result<uint64_t> start = TailStartOffset(log->path, *options.tail_lines);
    if (start.ok()) offset = *start;
  }
  LogFollower follower(jobs, std::move(options), std::string(), 0, false);
  follower.Enter(std::move(log).value(), offset);
  return follower;
}

void LogFollower::Enter(AttemptLog log, uint64_t offset) {
  path_ = log.path;
  offset_ = offset;
  // A queued attempt is announced once it starts, with the run id it gets then.
  announce_ = !log.queued;
  queued_said_ = false;
  last_read_ = false;
  attempt_ = std::move(log);
}

bool LogFollower::MovedAside() {
  if (attempt_->whole || attempt_->queued || attempt_->path.empty()) return false;
  std::string kept = KeptAsidePath(*attempt_);
  if (!sys::PathExists(kept)) return false;
  // A relaunch renames the log before the next run makes a new one of that
  // name: not there after a read, the read was of this run's log.
  attempt_->path = kept;
  attempt_->whole = true;
  path_ = std::move(kept);
  return true;
}

Result<std::optional<LogStep>> LogFollower::WaitForStart() {
  if (queued_said_ && options_.follow) {
    // Still queued (the cheap check refuses a queued job): a queued job
    // starts before it can be anything else, so it is still this attempt.
    Result<LogSource> source = jobs_->GetLogSource(options_.job);
    if (!source.ok() && source.status().code() == ErrorCode::kFailedPrecondition) {
      return std::optional<LogStep>(LogStep{LogStep::Kind::kWait, 0, {}});
    }
  }
  Result<JobRecord> record = jobs_->GetJob(options_.job);
  if (!record.ok()) return record.status();
  if (record->state == JobState::kQueued && CurrentAttempt(*record) == attempt_->attempt) {
    if (!queued_said_) {
      queued_said_ = true;
      LogStep step{LogStep::Kind::kData, 0, {}};
      step.queued_waiting_for = record->waiting_for;
      return std::optional<LogStep>(std::move(step));
    }
    return std::optional<LogStep>(LogStep{options_.follow ? LogStep::Kind::kWait : LogStep::Kind::kDone, 0, {}});
  }
  // Started, or gone without starting (a stop cancels a queued job).
  Result<AttemptLog> started = FindAttemptLog(*record, attempt_->attempt);
  if (!started.ok() || started->path.empty() || started->queued) {
    return std::optional<LogStep>(LogStep{LogStep::Kind::kDone, 0, {}});
  }
  Enter(std::move(started).value(), 0);
  return std::optional<LogStep>();
}

Result<std::optional<LogStep>> LogFollower::AtEndOfWhole() {
  if (!options_.across_attempts) return std::optional<LogStep>(LogStep{LogStep::Kind::kDone, offset_, {}});
  Result<JobRecord> record = jobs_->GetJob(options_.job);
  if (!record.ok()) return record.status();
  if (Result<AttemptLog> next = FindAttemptLog(*record, attempt_->attempt + 1); next.ok()) {
    Enter(std::move(next).value(), 0);
    return std::optional<LogStep>();
  }
  // Kept aside and the relaunch not yet in the record: it is being started.
  const bool relaunching = CurrentAttempt(*record) == attempt_->attempt && record->run_id == attempt_->run_id &&
                           (IsActive(record->state) || RelaunchPending(*record));
  return std::optional<LogStep>(LogStep{relaunching ? LogStep::Kind::kWait : LogStep::Kind::kDone, offset_, {}});
}

Result<std::optional<LogStep>> LogFollower::AtEndOfCurrent() {
  // The cheap check first, as every follower makes it at each end of what
  // is written; the whole record only once the run has ended.
  Result<LogSource> source = jobs_->GetLogSource(options_.job);
  if (source.ok() && !source->ended) return std::optional<LogStep>(LogStep{LogStep::Kind::kWait, offset_, {}});
  // kFailedPrecondition: queued, so a relaunch of ours is waiting for GPUs.
  if (!source.ok() && source.status().code() != ErrorCode::kFailedPrecondition) return source.status();
  Result<JobRecord> record = jobs_->GetJob(options_.job);
  if (!record.ok()) return record.status();
  if (record->run_id == attempt_->run_id) {
    if (IsActive(record->state) || RelaunchPending(*record)) {
      return std::optional<LogStep>(LogStep{LogStep::Kind::kWait, offset_, {}});
    }
    if (last_read_) return std::optional<LogStep>(LogStep{LogStep::Kind::kDone, offset_, {}});
    last_read_ = true;  // bytes written as it ended
    return std::optional<LogStep>();
  }
  // The job moved on: read the rest of this run's log where it is kept, if
  // it is (a rerun by `train start` keeps no lineage).
  if (std::optional<AttemptLog> kept = FindAttemptByRun(*record, attempt_->run_id)) {
    path_ = kept->path;
    attempt_->path = kept->path;
    attempt_->whole = true;
    return std::optional<LogStep>();
  }
  return std::optional<LogStep>(LogStep{LogStep::Kind::kDone, offset_, {}});
}

Result<LogStep> LogFollower::NextOfAttempt() {
  // Each round either answers or moves on (into the log kept aside, the next
  // attempt, one last read); a few suffice, and a wait is always safe.
  for (int round = 0; round < 6; ++round) {
    if (attempt_->queued) {
      Result<std::optional<LogStep>> step = WaitForStart();
      if (!step.ok()) return step.status();
      if (*step) return std::move(**step);
    }
    if (announce_) {
      announce_ = false;
      LogStep step{LogStep::Kind::kData, offset_, {}};
      step.attempt_start = LogStep::AttemptStart{attempt_->attempt, attempt_->run_id, attempt_->changes};
      return step;
    }
    Result<LogStep> chunk = ReadChunk();
    if (!chunk.ok()) return chunk.status();
    if (MovedAside()) continue;  // read again from where it is now
    if (chunk->size() > 0) return Take(std::move(chunk).value());
    if (!options_.follow) return LogStep{LogStep::Kind::kDone, offset_, {}};
    Result<std::optional<LogStep>> step = std::optional<LogStep>();
    if (attempt_->whole) {
      step = AtEndOfWhole();
    } else if (Result<uint64_t> size = sys::RegularFileSize(path_); size.ok() && *size < offset_) {
      if (MovedAside()) continue;  // what was shorter is the next run's new log
      const uint64_t was = offset_;
      offset_ = 0;  // cut, as in Next
      Result<LogStep> fresh = ReadChunk();
      if (!fresh.ok()) return fresh.status();
      if (MovedAside()) {
        offset_ = was;
        continue;
      }
      LogStep cut = Take(std::move(fresh).value());
      cut.truncated = true;
      return cut;
    } else {
      step = AtEndOfCurrent();
    }
    if (!step.ok()) return step.status();
    if (*step) return std::move(**step);
  }
  return LogStep{LogStep::Kind::kWait, offset_, {}};
}

}  // namespace gpuctl::train
