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
  // kData: the log became shorter than where the follower stood (logrotate's
  // copytruncate), so it goes on from the new content's start: `offset` is 0
  // and `data` (maybe empty) is what the log holds now.
  bool truncated = false;
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

  const std::string& path() const { return path_; }

 private:
  LogFollower(JobSupervisor& jobs, LogFollowOptions options, std::string path, uint64_t offset, bool ended);
  // The next chunk from offset_ (empty at the end, or when there is no log yet).
  Result<std::string> ReadChunk() const;
  LogStep DataStep(std::string data);

  JobSupervisor* jobs_;
  LogFollowOptions options_;
  std::string path_;
  uint64_t offset_;
  bool ended_;
};

}  // namespace gpuctl::train
