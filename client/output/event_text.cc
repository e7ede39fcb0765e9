#include "client/output/event_text.h"

#include <time.h>

#include <cstdio>

#include "common/utf8.h"

namespace gpuctl::client {
namespace {

// Wide enough for the kinds known today (events_dropped), so columns line up.
constexpr int kKindWidth = 14;

// Line breaks and tabs read as spaces; everything else a terminal would act
// on (ESC, the 8-bit CSI, U+202E) is shown escaped.
std::string OneLine(const std::string& text) {
  std::string out = text;
  for (char& c : out) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  return EscapeForTerminal(out);
}

}  // namespace

std::string FormatLocalTimeMs(int64_t unix_ms) {
  // Floor division, so times before 1970 keep a millisecond part in 0..999.
  int64_t seconds = unix_ms / 1000;
  int64_t millis = unix_ms % 1000;
  if (millis < 0) {
    millis += 1000;
    seconds -= 1;
  }
  time_t t = static_cast<time_t>(seconds);
  struct tm local {};
  if (localtime_r(&t, &local) == nullptr) return std::to_string(unix_ms) + "ms";
  char date[32];
  char zone[8];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &local);
  std::strftime(zone, sizeof zone, "%z", &local);  // "+0200"
  std::string z = zone;
  if (z.size() == 5) z.insert(3, ":");  // ISO 8601 extended: "+02:00"
  char ms[8];
  std::snprintf(ms, sizeof ms, ".%03d", static_cast<int>(millis));
  return std::string(date) + ms + z;
}

std::string AgentEventToText(const v1::AgentEvent& event) {
  std::string kind = OneLine(event.kind());
  if (kind.size() < static_cast<size_t>(kKindWidth)) kind.resize(static_cast<size_t>(kKindWidth), ' ');
  std::string job = event.job().empty() ? "-" : OneLine(event.job());
  return FormatLocalTimeMs(event.time_unix_ms()) + " " + kind + " " + job + " " + OneLine(event.message()) + "\n";
}

}  // namespace gpuctl::client
