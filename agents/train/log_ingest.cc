#include "agents/train/log_ingest.h"

#include <algorithm>
#include <cstring>
#include <functional>

#include <spdlog/spdlog.h>

#include "agents/sys/files.h"
#include "agents/train/event_retention.h"

namespace gpuctl::train {
namespace {

void MergeMetrics(const MetricsState& fresh, MetricsState& kept) {
  if (fresh.step) kept.step = fresh.step;
  if (fresh.loss) kept.loss = fresh.loss;
  if (fresh.grad_norm) kept.grad_norm = fresh.grad_norm;
  if (fresh.learning_rate) kept.learning_rate = fresh.learning_rate;
  if (fresh.throughput) kept.throughput = fresh.throughput;
  if (fresh.best_throughput &&
      (!kept.best_throughput || ThroughputFamily(*kept.best_throughput) != ThroughputFamily(*fresh.best_throughput) ||
       IsFaster(*fresh.best_throughput, *kept.best_throughput))) {
    kept.best_throughput = fresh.best_throughput;
  }
}

// 16 bytes a step, in two chains that do not wait on each other (one
// chain's multiplies, each waiting on the last, were most of this function's
// time): the novelty ring needs lines told apart, not a hash that resists an
// adversary (a job that forges repeats only hides its own progress).
// std::hash took an eighth of the ingest's time.
uint64_t LineHash(std::string_view line) {
  uint64_t even = 0x9E3779B97F4A7C15ull ^ line.size(), odd = 0xD6E8FEB86659FD93ull;
  size_t at = 0;
  for (; at + 16 <= line.size(); at += 16) {
    uint64_t first = 0, second = 0;
    std::memcpy(&first, line.data() + at, 8);
    std::memcpy(&second, line.data() + at + 8, 8);
    even = (even ^ first) * 0xFF51AFD7ED558CCDull;
    odd = (odd ^ second) * 0xFF51AFD7ED558CCDull;
    even ^= even >> 32;
    odd ^= odd >> 32;
  }
  uint64_t tail[2] = {0, 0};
  std::memcpy(tail, line.data() + at, line.size() - at);
  uint64_t h = (even ^ tail[0]) * 0xC4CEB9FE1A85EC53ull + ((odd ^ tail[1]) * 0xFF51AFD7ED558CCDull);
  return h ^ (h >> 29);
}

}  // namespace

LogIngest::LogIngest() {
  auto metrics = MetricsTracker::Create();
  if (metrics.ok()) metrics_ = std::make_unique<MetricsTracker>(std::move(metrics).value());
}

void LogIngest::CountIfNovel(std::string_view line) {
  // A bar redrawn with \r arrives as its own lines; blank ones say nothing.
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  if (std::all_of(line.begin(), line.end(), blank)) return;
  size_t hash = LineHash(line);
  // All sixteen compared, without a branch each: an early return
  // mispredicted often enough to make this a tenth of the ingest's time.
  bool repeated = false;
  for (size_t seen : recent_) repeated |= seen == hash;
  if (repeated) return;
  recent_[recent_next_] = hash;
  recent_next_ = (recent_next_ + 1) % recent_.size();
  ++novel_lines_;
}

bool LogIngest::Ingest(JobRecord& r, size_t max_bytes, int64_t now_unix_ms, const OnEvent& on_event) {
  if (r.log_path.empty()) return false;
  Result<uint64_t> size = sys::RegularFileSize(r.log_path);
  if (!size.ok()) return false;
  if (*size < r.parsed_offset) r.parsed_offset = 0;  // truncated or replaced: read it anew
  r.log_bytes = *size;
  if (*size == r.parsed_offset) return false;
  // One buffer for every job this thread ingests, kept between ticks.
  thread_local std::string buffer;
  Result<size_t> got = sys::ReadRegularFileRangeInto(r.log_path, r.parsed_offset, max_bytes, buffer);
  if (!got.ok() || *got == 0) return false;
  const std::string_view data(buffer.data(), *got);
  // Whole lines only, so parsed_offset always sits at a line start. A job
  // that ended, or a line past the splitter's cap, is fed as it is.
  size_t end = data.find_last_of("\n\r");
  size_t feed = end == std::string_view::npos ? 0 : end + 1;
  bool ended = !IsActive(r.state);
  if (ended || data.size() - feed > LineSplitter::kDefaultMaxLineBytes) feed = data.size();
  if (feed == 0) return false;

  std::vector<LogEvent> events;
  auto sink = [&](std::string_view line, uint64_t offset) {
    events_.ObserveLine(line, offset, events);
    if (metrics_) metrics_->Observe(line);
    CountIfNovel(line);
  };
  lines_.Feed(data.substr(0, feed), r.parsed_offset, sink);
  r.parsed_offset += feed;
  if (ended && r.parsed_offset == r.log_bytes) lines_.Finish(sink);
  if (metrics_) MergeMetrics(metrics_->state(), r.metrics);

  bool added = false;
  for (LogEvent& e : events) {
    if (on_event) on_event(r, e);
    uint64_t dropped = KeepEvent(r.events, {std::move(e), now_unix_ms});
    if (dropped > 0 && r.events_dropped == 0) {
      spdlog::info("job '{}': its events pass what a run keeps; dropping the oldest that decide nothing",
                   r.spec.name);
    }
    r.events_dropped += dropped;
    added = true;
  }
  return added;
}

}  // namespace gpuctl::train
