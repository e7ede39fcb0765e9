// Reads a job's log from an offset in chunks, and with `follow` keeps going
// as the job writes until the job has ended and every byte was handed over.
// It never waits: at the end of what is written it says so (kWait), and the
// caller waits for the file to change (sys::FileWatchHub) and asks again. So
// a stream costs no thread, and a thousand idle ones cost a thousand of
// these small objects.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agents/train/attempt_logs.h"
#include "agents/train/job_supervisor.h"
#include "common/status.h"

namespace gpuctl::train {

struct LogFollowOptions {
  std::string job;
  uint64_t from_offset = 0;
  // Used when from_offset is 0: start this many lines before the end (0: at
  // the end). Not set: from from_offset.
  std::optional<uint32_t> tail_lines = std::nullopt;
  bool follow = false;
  size_t chunk_bytes = 256 * 1024;
  // 0: the current run. N: attempt N (from_offset and tail_lines apply to
  // it). kNotFound at Open for an attempt the job does not have.
  uint32_t attempt = 0;
  // See above. Unset: the current run's log only, as older clients expect.
  bool across_attempts = false;
  // The reader is on this host and reads the log itself: steps name ranges of
  // the file (LogStep::local, up to local_range_bytes each) instead of
  // carrying them, which saves the bytes two copies and a socket. Not for a
  // log beneath a container's root: the agent resolves those inside the root
  // (sys::OpenPath), a client would follow the container's links on the host.
  // A range is read after it is named, so a log cut and regrown past it
  // meanwhile reads as grown (as between two reads of the agent's): ranges
  // are kept short to keep that window short.
  bool local_ranges = false;
  uint64_t local_range_bytes = uint64_t{8} << 20;
};

// The offset where the last `lines` lines of the file begin (0 when it has
// fewer). A last line without '\n' counts as a line.
Result<uint64_t> TailStartOffset(const std::string& path, uint32_t lines);

struct LogStep {
  enum class Kind {
    kData,  // `data` starts at `offset`
    kWait,  // at the end of what is written, and the job still runs
    kDone,  // everything asked for was handed over
  };
  Kind kind = Kind::kDone;
  uint64_t offset = 0;
  std::string data;
  // kData with local_ranges: the bytes are `length` from `offset` of the file
  // at `path` with this device and inode (`data` is empty).
  struct LocalRange {
    std::string path;
    uint64_t device = 0;
    uint64_t inode = 0;
    uint64_t length = 0;
  };
  std::optional<LocalRange> local = std::nullopt;
  uint64_t size() const { return local ? local->length : data.size(); }
  // kData: the log became shorter than where the follower stood (logrotate's
  // copytruncate), so it goes on from the new content's start: `offset` is 0
  // and `data` or `local` (maybe empty) is what the log holds now.
  bool truncated = false;
  // kData, across attempts: the first step of each attempt the follower
  // reaches (its data may be empty), with what the relaunch into it changed.
  struct AttemptStart {
    uint32_t attempt = 1;
    std::string run_id;
    std::vector<std::string> changes;
  };
  std::optional<AttemptStart> attempt_start = std::nullopt;
  // kData with no data: the job is queued, waiting for this; said once
  // per wait.
  std::optional<std::string> queued_waiting_for = std::nullopt;
};

class LogFollower {
 public:
  // kNotFound for an unknown job.
  static Result<LogFollower> Open(JobSupervisor& jobs, LogFollowOptions options);

  // The next step from where the last chunk ended. Errors (a log that is not
  // a regular file, unreadable) end the stream. With follow, a log found
  // shorter than that point at the end of what is written was cut (see
  // LogStep::truncated): a log cut and regrown past the point before the
  // follower looks cannot be told from one that grew.
  Result<LogStep> Next();

  // The file to wait on after kWait (empty while the job is queued: the
  // hub's tick wakes the wait).
  const std::string& path() const { return path_; }

 private:
  LogFollower(JobSupervisor& jobs, LogFollowOptions options, std::string path, uint64_t offset, bool ended);
  static Result<LogFollower> OpenAttempt(JobSupervisor& jobs, LogFollowOptions options);
  Result<LogStep> NextOfAttempt();
  // Steps of NextOfAttempt's: `done` answers the round (nullopt: go on).
  Result<std::optional<LogStep>> WaitForStart();
  Result<std::optional<LogStep>> AtEndOfWhole();
  Result<std::optional<LogStep>> AtEndOfCurrent();
  // Follows `log` from `offset`, said in the next step.
  void Enter(AttemptLog log, uint64_t offset);
  // The run being read has ended and a relaunch moved its log aside: read
  // on there. Checked after each read of the current run's log, so that no
  // byte of the next run's log (which takes the old name) passes for ours.
  bool MovedAside();
  // The next chunk from offset_ as a kData step, not yet taken: its bytes, or
  // with local ranges the range that holds them; none at the end, or when
  // there is no log yet.
  Result<LogStep> ReadChunk() const;
  // Hands `chunk` over: the follower moves past its bytes.
  LogStep Take(LogStep chunk);

  JobSupervisor* jobs_;
  LogFollowOptions options_;
  std::string path_;
  uint64_t offset_;
  bool ended_;
  // Set when following by attempt (across_attempts, or an attempt asked for).
  std::optional<AttemptLog> attempt_;
  bool announce_ = false;     // the next step says attempt_ starts
  bool queued_said_ = false;  // the client was told attempt_ is queued
  bool last_read_ = false;    // the run ended for good: one more read, then done
};

}  // namespace gpuctl::train
