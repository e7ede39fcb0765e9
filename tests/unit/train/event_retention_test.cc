#include "agents/train/event_retention.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace gpuctl::train {
namespace {

JobEventRecord Event(std::string_view kind, std::string message) {
  LogEvent e;
  e.kind = std::string(kind);
  e.message = std::move(message);
  return {e, 0};
}

size_t Count(const std::vector<JobEventRecord>& events, std::string_view kind) {
  return static_cast<size_t>(std::count_if(events.begin(), events.end(),
                                           [&](const JobEventRecord& e) { return e.event.kind == kind; }));
}

TEST(EventRetention, FewEventsAreAllKept) {
  std::vector<JobEventRecord> events;
  uint64_t dropped = 0;
  for (int i = 0; i < 10; ++i) dropped += KeepEvent(events, Event(kTraceback, "ValueError: " + std::to_string(i)));
  dropped += KeepEvent(events, Event(kCudaOom, "torch.OutOfMemoryError: CUDA out of memory."));
  EXPECT_EQ(dropped, 0u);
  EXPECT_EQ(events.size(), 11u);
}

// The run of the issue: 1200 exceptions of 5 KB, then the OOM. The OOM is
// kept (the first 1000 were kept before, and the OOM never was), the oldest
// exceptions go, the newest stay, and what went is counted.
TEST(EventRetention, ThousandsOfExceptionsNeverHideTheOomAtTheEnd) {
  std::vector<JobEventRecord> events;
  uint64_t dropped = 0;
  const std::string detail(5000, 'x');
  for (int i = 0; i < 1200; ++i) {
    dropped += KeepEvent(events, Event(kTraceback, "ValueError: " + std::to_string(i) + " " + detail));
  }
  dropped += KeepEvent(events, Event(kCudaOom, "torch.OutOfMemoryError: CUDA out of memory."));
  ASSERT_EQ(Count(events, kCudaOom), 1u);
  EXPECT_EQ(events.back().event.kind, kCudaOom);
  EXPECT_EQ(dropped + events.size(), 1201u);
  EXPECT_GT(dropped, 1000u);
  size_t bytes = 0;
  for (const JobEventRecord& e : events) bytes += EventBytes(e.event);
  EXPECT_LE(bytes, kRunEventBytes + EventBytes(events.back().event) + EventBytes(events.front().event));
  // The newest exceptions are those kept, in order.
  EXPECT_EQ(events[events.size() - 2].event.message.substr(0, 16), "ValueError: 1199");
  for (size_t i = 1; i + 1 < events.size(); ++i) {
    EXPECT_LT(std::stoi(events[i - 1].event.message.substr(12)), std::stoi(events[i].event.message.substr(12)));
  }
}

TEST(EventRetention, DecidingEventsSurviveAnyNumberOfOthers) {
  std::vector<JobEventRecord> events;
  KeepEvent(events, Event(kNcclError, "NCCL error: unhandled cuda error"));
  KeepEvent(events, Event(kSignal, "Signal 9 (SIGKILL) received by PID 7"));
  KeepEvent(events, Event(kAllocConfInvalid, "RuntimeError: Unrecognized CachingAllocator option: x"));
  for (int i = 0; i < 5000; ++i) KeepEvent(events, Event(kTraceback, "E: " + std::to_string(i) + std::string(300, 'y')));
  EXPECT_EQ(Count(events, kNcclError), 1u);
  EXPECT_EQ(Count(events, kSignal), 1u);
  EXPECT_EQ(Count(events, kAllocConfInvalid), 1u);
  EXPECT_EQ(events.front().event.kind, kNcclError) << "kept in order, oldest first";
}

// The last traceback names why a run ended: it stays even when it alone is
// over the budget.
TEST(EventRetention, TheLastTracebackIsAlwaysKept) {
  std::vector<JobEventRecord> events;
  for (char c : {'a', 'b', 'c'}) KeepEvent(events, Event(kTraceback, std::string(kRunEventBytes, c)));
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().event.message[0], 'c');
  EXPECT_EQ(Count(events, kTraceback), 1u);
}

// A log printing OOMs in a loop still makes a bounded record: the oldest
// deciding events go past their own cap, the newest stay.
TEST(EventRetention, DecidingEventsHaveACapOfTheirOwn) {
  std::vector<JobEventRecord> events;
  uint64_t dropped = 0;
  for (size_t i = 0; i < kRunDecidingEvents + 50; ++i) {
    dropped += KeepEvent(events, Event(kCudaOom, "oom " + std::to_string(i)));
  }
  EXPECT_EQ(events.size(), kRunDecidingEvents);
  EXPECT_EQ(dropped, 50u);
  EXPECT_EQ(events.back().event.message, "oom " + std::to_string(kRunDecidingEvents + 49));
  EXPECT_EQ(events.front().event.message, "oom 50");
}

}  // namespace
}  // namespace gpuctl::train
