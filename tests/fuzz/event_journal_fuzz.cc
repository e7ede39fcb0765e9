// The agent's event journal (STATE_DIR/events/events.jsonl), read back at
// start: EventJournal::FromLine over each line.
// Invariants: an accepted line has seq and kind; written back with ToLine
// it reads back the same.
#include "agents/events/event_journal.h"
#include "agents/sys/text_fields.h"
#include "tests/fuzz/fuzz_check.h"

using namespace gpuctl;
using namespace gpuctl::events;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  for (std::string_view line : sys::Lines(fuzz::AsText(data, size))) {
    Result<AgentEvent> event = EventJournal::FromLine(line);
    if (!event.ok()) continue;
    FUZZ_CHECK(event->seq != 0 && !event->kind.empty());
    std::string written = EventJournal::ToLine(*event);
    Result<AgentEvent> again = EventJournal::FromLine(written);
    FUZZ_CHECK(again.ok());
    FUZZ_CHECK(EventJournal::ToLine(*again) == written);
  }
  return 0;
}
