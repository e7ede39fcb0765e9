// Reading a job's log into its record: events (cuda_oom, tracebacks ...)
// and metrics, from the last parsed offset on, whole lines at a time. One
// per job, used only by the job supervisor's owner thread: no lock is held
// while it reads or parses.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "agents/train/job_record.h"
#include "agents/train/line_splitter.h"
#include "agents/train/log_events.h"
#include "agents/train/metrics.h"

namespace gpuctl::train {

class LogIngest {
 public:
  // Called for each event taken into the record (for the agent's event log).
  using OnEvent = std::function<void(const JobRecord& record, const LogEvent& event)>;

  LogIngest();

  // Reads up to `max_bytes` of the log past record.parsed_offset and folds
  // them in: record.log_bytes, parsed_offset, metrics and events move
  // (events as event_retention.h bounds them, record.events_dropped counting
  // what went).
  // Only whole lines are taken while the job may still write (so a restart
  // resumes at a line start); for an ended job the rest is taken too.
  // Returns true when events were added. A log that cannot be read (gone, a
  // link, a FIFO) reads as nothing.
  bool Ingest(JobRecord& record, size_t max_bytes, int64_t now_unix_ms, const OnEvent& on_event);
  // Whether bytes are left to read (as of the last Ingest).
  static bool Behind(const JobRecord& record) { return record.parsed_offset < record.log_bytes; }
  // Lines read so far that repeat none of the last kRecentLines: output that
  // says the run moves (a tqdm bar counts: its count changes), unlike a
  // waiting rank's same warning again and again. Hang detection reads it.
  uint64_t novel_lines() const { return novel_lines_; }
  static constexpr size_t kRecentLines = 16;

 private:
  void CountIfNovel(std::string_view line);

  LineSplitter lines_;
  LogEventParser events_;
  std::unique_ptr<MetricsTracker> metrics_;
  uint64_t novel_lines_ = 0;
  std::array<size_t, kRecentLines> recent_{};  // hashes of the last lines, a ring
  size_t recent_next_ = 0;
};

}  // namespace gpuctl::train
