#include "agents/train/log_follower.h"

#include <algorithm>

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
  Result<LogSource> source = jobs.GetLogSource(options.job);
  if (!source.ok()) return source.status();
  uint64_t offset = options.from_offset;
  if (offset == 0 && options.tail_lines) {
    Result<uint64_t> start = TailStartOffset(source->path, *options.tail_lines);
    if (start.ok()) offset = *start;
  }
  return LogFollower(jobs, std::move(options), source->path, offset, source->ended);
}

Result<std::string> LogFollower::ReadChunk() const {
  Result<std::string> data = sys::ReadRegularFileRange(path_, offset_, options_.chunk_bytes);
  if (!data.ok() && data.status().code() == ErrorCode::kNotFound) return std::string();
  return data;
}

LogStep LogFollower::DataStep(std::string data) {
  LogStep step{LogStep::Kind::kData, offset_, std::move(data)};
  offset_ += step.data.size();
  return step;
}

Result<LogStep> LogFollower::Next() {
  // Two rounds at most: when the job turns out to have ended, one more read
  // picks up the bytes it wrote between our read and its exit.
  for (int round = 0; round < 2; ++round) {
    Result<std::string> data = ReadChunk();
    if (!data.ok()) return data.status();
    if (!data->empty()) return DataStep(std::move(data).value());
    if (!options_.follow) return LogStep{LogStep::Kind::kDone, offset_, {}};
    // Shorter than what was handed over: cut (copytruncate keeps the inode
    // and cuts to 0). Going on from the old offset would hand over the new
    // content from its middle (a torn line, the lines before it lost), so
    // go on from its start, as tail -F does, and say so.
    if (Result<uint64_t> size = sys::RegularFileSize(path_); size.ok() && *size < offset_) {
      offset_ = 0;
      Result<std::string> fresh = ReadChunk();
      if (!fresh.ok()) return fresh.status();
      LogStep step = DataStep(std::move(fresh).value());
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

}  // namespace gpuctl::train
