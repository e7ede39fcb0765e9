#include "agents/train/event_retention.h"

#include <algorithm>

namespace gpuctl::train {
namespace {

// Index of the newest traceback, or events.size() when there is none.
size_t LastTraceback(const std::vector<JobEventRecord>& events) {
  for (size_t i = events.size(); i-- > 0;) {
    if (events[i].event.kind == kTraceback) return i;
  }
  return events.size();
}

}  // namespace

bool DecidesSomething(const LogEvent& event) {
  return event.kind == kCudaOom || event.kind == kNcclError || event.kind == kSignal ||
         event.kind == kAllocConfInvalid;
}

size_t EventBytes(const LogEvent& e) {
  // The fixed fields' names and numbers, then what varies.
  size_t bytes = 256 + e.message.size() + 48 * e.other_processes.size();
  if (e.exception_type) bytes += e.exception_type->size();
  if (e.nccl_code) bytes += e.nccl_code->size();
  if (e.signal_name) bytes += e.signal_name->size();
  return bytes;
}

uint64_t KeepEvent(std::vector<JobEventRecord>& events, JobEventRecord event) {
  events.push_back(std::move(event));
  uint64_t dropped = 0;
  size_t deciding = 0;
  for (const JobEventRecord& e : events) deciding += DecidesSomething(e.event) ? 1u : 0u;
  while (deciding > kRunDecidingEvents) {
    auto oldest = std::find_if(events.begin(), events.end(),
                               [](const JobEventRecord& e) { return DecidesSomething(e.event); });
    events.erase(oldest);
    --deciding;
    ++dropped;
  }
  // The rest, oldest first, down to the byte budget; the last traceback is
  // never one of them.
  auto droppable = [&](size_t i, size_t last_traceback) {
    return !DecidesSomething(events[i].event) && i != last_traceback;
  };
  size_t last_traceback = LastTraceback(events);
  size_t bytes = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    if (droppable(i, last_traceback)) bytes += EventBytes(events[i].event);
  }
  size_t i = 0;
  while (bytes > kRunEventBytes && i < events.size()) {
    if (!droppable(i, last_traceback)) {
      ++i;
      continue;
    }
    bytes -= EventBytes(events[i].event);
    events.erase(events.begin() + static_cast<std::ptrdiff_t>(i));
    if (last_traceback > i) --last_traceback;  // still the last one (or still none)
    ++dropped;
  }
  return dropped;
}

}  // namespace gpuctl::train
