#include "agents/train/log_follower.h"

#include <algorithm>
#include <thread>

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

LogFollower::LogFollower(JobSupervisor& jobs, LogFollowOptions options)
    : jobs_(jobs), options_(std::move(options)) {}

void LogFollower::Cancel() {
  cancelled_ = true;
  std::lock_guard lock(waiter_mutex_);
  if (waiter_) waiter_->Interrupt();
}

Status LogFollower::Run(const Sink& sink) {
  Result<LogSource> source = jobs_.GetLogSource(options_.job);
  if (!source.ok()) return source.status();
  uint64_t offset = options_.from_offset;
  if (offset == 0 && options_.tail_lines > 0) {
    Result<uint64_t> start = TailStartOffset(source->path, options_.tail_lines);
    if (start.ok()) offset = *start;
  }
  if (options_.follow) {
    // Watch before the first read, so no write between read and wait is missed.
    Result<std::unique_ptr<sys::FileChangeWaiter>> waiter = sys::WatchFile(source->path);
    if (waiter.ok()) {
      std::lock_guard lock(waiter_mutex_);
      waiter_ = std::move(waiter).value();
      if (cancelled()) waiter_->Interrupt();
    }
  }
  bool ended = source->ended;
  while (!cancelled()) {
    Result<std::string> data = sys::ReadRegularFileRange(source->path, offset, options_.chunk_bytes);
    if (!data.ok() && data.status().code() != ErrorCode::kNotFound) return data.status();
    if (data.ok() && !data->empty()) {
      if (!sink(offset, *data)) return Unavailable("log stream closed by the client");
      offset += data->size();
      continue;
    }
    // At the end of what is written.
    if (!options_.follow || ended) return Status::Ok();
    Result<LogSource> now = jobs_.GetLogSource(options_.job);
    if (!now.ok()) return now.status();
    if (now->ended) {
      ended = true;  // one more read picks up the last bytes, then we are done
      continue;
    }
    std::unique_lock lock(waiter_mutex_);
    sys::FileChangeWaiter* waiter = waiter_.get();
    lock.unlock();
    // The timeout is a backstop for missed events (e.g. a log replaced by a
    // rerun) and for noticing the job's end; bytes wake us at once.
    if (waiter) {
      waiter->Wait(std::chrono::milliseconds(500));
    } else {
      Result<std::unique_ptr<sys::FileChangeWaiter>> retry = sys::WatchFile(source->path);
      if (retry.ok()) {
        std::lock_guard relock(waiter_mutex_);
        waiter_ = std::move(retry).value();
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));  // no file yet to watch
      }
    }
  }
  return Unavailable("log stream cancelled");
}

}  // namespace gpuctl::train
