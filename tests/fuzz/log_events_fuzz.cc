// A job's log, as the agent reads it: LogEventParser (and through it
// ParseLogLine, ParseCudaOomMessage, ParseSignalMessage, tracebacks, the rank
// prefix) over any bytes.
// Invariants: feeding the log in chunks of any size gives the same events as
// feeding it whole (LineSplitter's contract); events come in offset order and
// point into the log; their text is well-formed UTF-8 and survives the job
// record's JSON (ToJson / LogEventFromJson) unchanged.
#include <algorithm>
#include <vector>

#include <nlohmann/json.hpp>

#include "agents/train/job_record.h"
#include "agents/train/log_events.h"
#include "common/json_text.h"
#include "common/utf8.h"
#include "tests/fuzz/fuzz_check.h"

using namespace gpuctl;
using namespace gpuctl::train;

namespace {

// Small enough that the fuzzer reaches the cut of an over-long line.
constexpr size_t kMaxLineBytes = 512;

std::vector<LogEvent> ParseWhole(std::string_view log) {
  LogEventParser parser(kMaxLineBytes);
  std::vector<LogEvent> events = parser.Feed(log, 0);
  for (LogEvent& e : parser.Finish()) events.push_back(std::move(e));
  return events;
}

std::vector<LogEvent> ParseInChunks(std::string_view log, size_t chunk) {
  LogEventParser parser(kMaxLineBytes);
  std::vector<LogEvent> events;
  for (size_t at = 0; at < log.size(); at += chunk) {
    for (LogEvent& e : parser.Feed(log.substr(at, chunk), at)) events.push_back(std::move(e));
  }
  for (LogEvent& e : parser.Finish()) events.push_back(std::move(e));
  return events;
}

void CheckEvent(const LogEvent& e, size_t log_size) {
  FUZZ_CHECK(e.offset < log_size);
  FUZZ_CHECK(!e.traceback_offset || *e.traceback_offset <= e.offset);
  FUZZ_CHECK(IsValidUtf8(e.message));
  for (const std::optional<std::string>* text : {&e.exception_type, &e.nccl_code, &e.signal_name}) {
    FUZZ_CHECK(!*text || IsValidUtf8(**text));
  }
  std::string stored = DumpJson(ToJson(e));
  FUZZ_CHECK(LogEventFromJson(nlohmann::json::parse(stored)) == e);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view log = fuzz::AsText(data, size);
  std::vector<LogEvent> whole = ParseWhole(log);
  for (size_t i = 0; i < whole.size(); ++i) {
    CheckEvent(whole[i], size);
    FUZZ_CHECK(i == 0 || whole[i - 1].offset <= whole[i].offset);
  }
  // The chunk size comes from the input, so the fuzzer steers it too.
  size_t chunk = size == 0 ? 1 : 1 + data[0] % 97;
  FUZZ_CHECK(ParseInChunks(log, chunk) == whole);
  return 0;
}
