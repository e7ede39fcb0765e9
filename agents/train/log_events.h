// Finds the events that explain how a training job is doing or why it died,
// in its log as it is written (see LogEvent for the kinds and their fields).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "agents/train/line_splitter.h"
#include "agents/train/log_event.h"

namespace gpuctl::train {

// The kinds one line is enough for: cuda_oom, alloc_conf_invalid, nccl_error,
// signal (checked in that order; a line gives at most one). `line` has no
// terminator; a torchrun "[rankN]:" prefix goes to LogEvent::rank.
//  - alloc_conf_invalid: PyTorch refusing PYTORCH_CUDA_ALLOC_CONF at CUDA init
//    ("Expected 'True' or 'False' at index 2 in ConfigTokenizer but got
//    'maybe'", "Unrecognized key 'x' in CUDA allocator config.", "CachingAllocator
//    option max_split_size_mb too small, must be >= 20"...).
//  - nccl_error: "NCCL error in: ...", "NCCL WARN ...", an ncclXxxError code,
//    "Watchdog caught collective operation timeout", "NCCL communicator was
//    aborted". "NCCL INFO" lines are not errors.
//  - cuda_oom and signal: see cuda_oom_message.h and signal_message.h.
std::optional<LogEvent> ParseLogLine(std::string_view line, uint64_t offset);

// Reads a job's log incrementally. Adds to ParseLogLine:
//  - traceback: Python's "Traceback (most recent call last):", its indented
//    frames, and the first unindented line after them that reads "ExcType:
//    message" (or a bare "KeyboardInterrupt", "AssertionError"...), ExcType
//    being a dotted name ending in Error, Exception, Interrupt, Exit,
//    Iteration, Warning or Failure, as exception classes do. The event
//    sits at that final line; traceback_offset says where the block began.
//    Tracebacks of different ranks interleave in a torchrun log, so each rank
//    prefix has its own. Frame lines are not searched for other events (they
//    quote source code). Unindented lines that are not an exception line
//    (output of other processes) leave the traceback open.
//    A final line that is itself an event gives both: first the specific one
//    (cuda_oom, alloc_conf_invalid, nccl_error, signal: what a remediation
//    acts on), then the traceback (how the process ended), at the same offset.
//    Chained exceptions ("During handling of the above exception...") give one
//    traceback event per block.
//  - signal events that name a pid are reported once per (pid, signal):
//    torchrun states the same death three times in its failure summary.
// Events come out in the order of their offsets. One parser reads one log, from
// one thread.
class LogEventParser {
 public:
  explicit LogEventParser(size_t max_line_bytes = LineSplitter::kDefaultMaxLineBytes);

  // `chunk_offset` is the chunk's byte offset in the log (see LineSplitter for
  // chunks that do not follow on). Returns the events of the lines it ended.
  std::vector<LogEvent> Feed(std::string_view chunk, uint64_t chunk_offset);
  // Reads a last line that the log did not terminate.
  std::vector<LogEvent> Finish();

  // For a caller that splits lines itself (to feed the same lines to a
  // MetricsTracker, say): one whole line, as LineSplitter hands it over.
  void ObserveLine(std::string_view line, uint64_t offset, std::vector<LogEvent>& events);

 private:
  struct OpenTraceback {
    uint64_t start_offset = 0;
    uint32_t lines = 0;
  };

  void Emit(LogEvent event, std::vector<LogEvent>& events);

  LineSplitter splitter_;
  std::map<int, OpenTraceback> open_tracebacks_;  // by rank; -1: no rank prefix
  std::set<std::pair<int64_t, int>> reported_signals_;  // (pid, signal)
};

}  // namespace gpuctl::train
