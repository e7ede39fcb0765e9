// Training progress read from log lines: the hand-written scanner of the
// default grammar (ScanMetrics, ScanNumber, LooksLikeErrorProse) and the
// MetricsTracker that keeps the readings, over any line.
// Invariants: a number scanned lies within the text; a tracker reading is one
// of the line's own readings; throughput units are never empty.
#include "agents/sys/text_fields.h"
#include "agents/train/metrics.h"
#include "agents/train/metrics_scanner.h"
#include "tests/fuzz/fuzz_check.h"

using namespace gpuctl;
using namespace gpuctl::train;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Result<MetricsTracker> tracker = MetricsTracker::Create();
  FUZZ_CHECK(tracker.ok());
  for (std::string_view line : sys::Lines(fuzz::AsText(data, size))) {
    for (size_t at = 0; at < line.size() && at < 64; ++at) {
      if (std::optional<ScannedNumber> number = ScanNumber(line.substr(at))) {
        FUZZ_CHECK(number->length > 0 && number->length <= line.size() - at);
      }
    }
    (void)LooksLikeErrorProse(line);
    MetricsReading reading = ScanMetrics(line);
    FUZZ_CHECK(!reading.throughput || !reading.throughput->unit.empty());
    tracker->Observe(line);
    const MetricsState& state = tracker->state();
    FUZZ_CHECK(!state.throughput || !state.throughput->unit.empty());
    FUZZ_CHECK(!state.best_throughput || !state.best_throughput->unit.empty());
  }
  return 0;
}
