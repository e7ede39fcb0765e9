#include "agents/train/log_events.h"

#include <iterator>

#include "agents/train/cuda_oom_message.h"
#include "agents/train/event_keywords.h"
#include "agents/train/log_line.h"
#include "agents/train/signal_message.h"
#include "common/utf8.h"

namespace gpuctl::train {
namespace {

constexpr std::string_view kTracebackHeader = "Traceback (most recent call last):";
// A header whose exception line never comes (the process was killed while
// printing) is forgotten after this many lines of its rank.
constexpr uint32_t kMaxTracebackLines = 10'000;
constexpr size_t kMaxRemembered = 4096;

// What c10's allocator config parsers say when they refuse a setting
// (c10/core/AllocatorConfig.*, c10/cuda/CUDAAllocatorConfig.*, 1.x to 2.11).
constexpr std::string_view kAllocConfPhrases[] = {
    "in ConfigTokenizer",
    "CachingAllocator option",  // "...option max_split_size_mb too small", "Unrecognized ...option: x"
    "Unknown allocator backend",
    "For roundups, the",
    "Expected a single True/False argument for",
    "garbage_collect_threshold is invalid",
    "per_process_memory_fraction is invalid",
    "Number of register threads",
    "Pinned reserve segment size",
    "Error parsing CachingAllocator",
    "Allocator backend parsed at runtime",
};

struct NcclCode {
  std::string_view code;
  std::string_view wording;  // ncclGetErrorString
};
constexpr NcclCode kNcclCodes[] = {
    {"ncclUnhandledCudaError", "unhandled cuda error"},
    {"ncclSystemError", "unhandled system error"},
    {"ncclInternalError", "internal error"},
    {"ncclInvalidArgument", "invalid argument"},
    {"ncclInvalidUsage", "invalid usage"},
    {"ncclRemoteError", "remote process exited or there was a network error"},
};

// What marks an NCCL failure: "NCCL" followed by one of these, ...
constexpr std::string_view kAfterNccl[] = {" error", " Error", " WARN", " communicator was aborted"};
// ... "Some NCCL operations have failed or timed out", or the watchdog's phrase.
constexpr std::string_view kSomeNccl = "Some ";
constexpr std::string_view kNcclOperationsFailed = " operations have failed or timed out";
constexpr std::string_view kWatchdog = "Watchdog caught";
constexpr std::string_view kWatchdogTimeout = "Watchdog caught collective operation timeout";

bool Contains(std::string_view text, std::string_view phrase) {
  return text.find(phrase) != std::string_view::npos;
}

LogEvent EventFor(std::string_view kind, std::string_view body) {
  LogEvent event;
  event.kind = kind;
  event.message = CutUtf8(body, kMaxLogEventMessageBytes);
  if (auto type = LeadingExceptionType(body)) event.exception_type = std::string(*type);
  return event;
}

std::optional<LogEvent> ParseAllocConfError(std::string_view body) {
  bool refused = false;
  for (std::string_view phrase : kAllocConfPhrases) refused = refused || Contains(body, phrase);
  refused = refused || (Contains(body, "Unrecognized key '") && Contains(body, "allocator config"));
  if (!refused) return std::nullopt;
  return EventFor(kAllocConfInvalid, body);
}

// Every phrase but the watchdog's holds "NCCL" and every code starts with
// "nccl", so each spelling's occurrences are looked at once: a search per
// phrase and code (13 over every NCCL_DEBUG=INFO line) was a tenth of a log's ingest.
std::optional<LogEvent> ParseNcclError(std::string_view body) {
  bool named = false, error = false, error_wording = false;
  for (size_t at = body.find("NCCL"); at != std::string_view::npos; at = body.find("NCCL", at + 1)) {
    named = true;
    const std::string_view after = body.substr(at + 4);
    for (std::string_view phrase : kAfterNccl) error = error || after.starts_with(phrase);
    error_wording = error_wording || after.starts_with(" error") || after.starts_with(" Error");
    error = error || (after.starts_with(kNcclOperationsFailed) && body.substr(0, at).ends_with(kSomeNccl));
  }
  // The last of kNcclCodes the line names.
  std::optional<size_t> named_code;
  for (size_t at = body.find("nccl"); at != std::string_view::npos; at = body.find("nccl", at + 1)) {
    named = true;
    for (size_t k = 0; k < std::size(kNcclCodes); ++k) {
      if (body.substr(at).starts_with(kNcclCodes[k].code) && (!named_code || k > *named_code)) named_code = k;
    }
  }
  const bool watchdog = Contains(body, kWatchdog);
  if (!named && !watchdog) return std::nullopt;
  error = error || (watchdog && Contains(body, kWatchdogTimeout));
  std::optional<std::string> code;
  if (named_code) code = std::string(kNcclCodes[*named_code].code);
  if (!code && error_wording) {
    for (const NcclCode& c : kNcclCodes) {
      if (Contains(body, c.wording)) {
        code = std::string(c.code);
        break;
      }
    }
  }
  if (!error && !code) return std::nullopt;
  LogEvent event = EventFor(kNcclError, body);
  event.nccl_code = std::move(code);
  return event;
}

// Python exception classes end so by convention; requiring it keeps a stray
// "step: 5" or "Error: x" printed by another process from closing a traceback.
bool LooksLikeExceptionClass(std::string_view name) {
  std::string_view last = name.substr(name.rfind('.') + 1);
  if (last == "Error" || last == "Warning") return false;
  for (std::string_view suffix : {"Error", "Exception", "Interrupt", "Exit", "Iteration",
                                  "Warning", "Failure"}) {
    if (last.ends_with(suffix)) return true;
  }
  return false;
}

// The exception class of a traceback's final line, "ExcType: message" or a
// bare "KeyboardInterrupt".
std::optional<std::string_view> FinalExceptionType(std::string_view body) {
  if (auto type = LeadingExceptionType(body); type && LooksLikeExceptionClass(*type)) return type;
  if (IsDottedIdentifier(body) && LooksLikeExceptionClass(body)) return body;
  return std::nullopt;
}

}  // namespace

std::optional<LogEvent> ParseLogLine(std::string_view line, uint64_t offset) {
  RankedLine ranked = SplitRankPrefix(line);
  // Only the parsers whose key words the line holds: an NCCL_DEBUG=INFO line
  // has "NCCL" and nothing the other three look for.
  const unsigned words = EventWordsIn(ranked.body);
  if (words == 0) return std::nullopt;
  std::optional<LogEvent> event;
  if (words & kCudaOomWords) event = ParseCudaOomMessage(ranked.body);
  if (!event && (words & kAllocConfWords)) event = ParseAllocConfError(ranked.body);
  if (!event && (words & kNcclWords)) event = ParseNcclError(ranked.body);
  if (!event && (words & kSignalWords)) event = ParseSignalMessage(ranked.body);
  if (event) {
    event->offset = offset;
    event->rank = ranked.rank;
  }
  return event;
}

LogEventParser::LogEventParser(size_t max_line_bytes) : splitter_(max_line_bytes) {}

std::vector<LogEvent> LogEventParser::Feed(std::string_view chunk, uint64_t chunk_offset) {
  std::vector<LogEvent> events;
  splitter_.Feed(chunk, chunk_offset,
                 [&](std::string_view line, uint64_t offset) { ObserveLine(line, offset, events); });
  return events;
}

std::vector<LogEvent> LogEventParser::Finish() {
  std::vector<LogEvent> events;
  splitter_.Finish(
      [&](std::string_view line, uint64_t offset) { ObserveLine(line, offset, events); });
  return events;
}

void LogEventParser::ObserveLine(std::string_view line, uint64_t offset,
                                 std::vector<LogEvent>& events) {
  RankedLine ranked = SplitRankPrefix(line);
  const int rank_key = ranked.rank.value_or(-1);
  if (ranked.body.starts_with(kTracebackHeader)) {
    open_tracebacks_[rank_key] = OpenTraceback{offset, 0};
    return;
  }
  if (auto open = open_tracebacks_.find(rank_key); open != open_tracebacks_.end()) {
    const uint64_t started_at = open->second.start_offset;
    if (++open->second.lines > kMaxTracebackLines) open_tracebacks_.erase(open);
    const bool frame = ranked.body.empty() || ranked.body.front() == ' ' ||
                       ranked.body.front() == '\t';
    if (frame) return;
    if (auto type = FinalExceptionType(ranked.body)) {
      if (auto event = ParseLogLine(line, offset)) Emit(std::move(*event), events);
      LogEvent traceback = EventFor(kTraceback, ranked.body);
      traceback.exception_type = std::string(*type);
      traceback.offset = offset;
      traceback.rank = ranked.rank;
      traceback.traceback_offset = started_at;
      Emit(std::move(traceback), events);
      open_tracebacks_.erase(rank_key);
      return;
    }
  }
  if (auto event = ParseLogLine(line, offset)) Emit(std::move(*event), events);
}

void LogEventParser::Emit(LogEvent event, std::vector<LogEvent>& events) {
  // A log may hold any byte; what leaves the parser is well-formed UTF-8,
  // so records, events and protos never choke on it.
  event.message = SanitizeUtf8(event.message);
  for (std::optional<std::string>* text : {&event.exception_type, &event.nccl_code, &event.signal_name}) {
    if (*text) **text = SanitizeUtf8(**text);
  }
  if (event.kind == kSignal && event.pid && event.signal_number) {
    std::pair<int64_t, int> key{*event.pid, *event.signal_number};
    if (reported_signals_.contains(key)) return;
    if (reported_signals_.size() >= kMaxRemembered) reported_signals_.clear();
    reported_signals_.insert(key);
  }
  events.push_back(std::move(event));
}

}  // namespace gpuctl::train
