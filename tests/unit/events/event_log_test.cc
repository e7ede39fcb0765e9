#include "agents/events/event_log.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <limits>
#include <mutex>
#include <set>
#include <thread>

#include "tests/fakes/fake_clock.h"

namespace gpuctl::events {
namespace {

using namespace std::chrono_literals;

AgentEvent Event(const std::string& kind, const std::string& job = "") {
  AgentEvent e;
  e.kind = kind;
  e.job = job;
  e.message = kind + " happened";
  return e;
}

std::vector<uint64_t> Seqs(const std::vector<AgentEvent>& events) {
  std::vector<uint64_t> seqs;
  for (const AgentEvent& e : events) seqs.push_back(e.seq);
  return seqs;
}

int64_t WallMs(const testing::FakeClock& clock) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock.WallNow().time_since_epoch()).count();
}

TEST(EventLog, PublishNumbersFromOneAndStampsTheTimeWhenUnset) {
  testing::FakeClock clock;
  EventLog log(clock);
  EXPECT_EQ(log.last_seq(), 0u);
  AgentEvent given_seq = Event("job_started", "a");
  given_seq.seq = 77;  // replaced: only the log numbers events
  EXPECT_EQ(log.Publish(given_seq), 1u);
  clock.Advance(1500ms);
  AgentEvent with_time = Event("job_ended", "a");
  with_time.time_unix_ms = 1234;
  EXPECT_EQ(log.Publish(with_time), 2u);
  AgentEvent null_fields = Event("guard_warning");
  null_fields.fields = nullptr;
  EXPECT_EQ(log.Publish(null_fields), 3u);

  std::vector<AgentEvent> all = log.Since(0);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(Seqs(all), (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(all[0].time_unix_ms, WallMs(clock) - 1500);
  EXPECT_EQ(all[0].kind, "job_started");
  EXPECT_EQ(all[0].job, "a");
  EXPECT_EQ(all[1].time_unix_ms, 1234);
  EXPECT_EQ(all[2].time_unix_ms, WallMs(clock));
  EXPECT_TRUE(all[2].fields.is_object());
  EXPECT_EQ(log.last_seq(), 3u);
}

TEST(EventLog, RingKeepsOnlyTheNewestCapacityEvents) {
  testing::FakeClock clock;
  EventLog log(clock, 3);
  EXPECT_EQ(log.capacity(), 3u);
  for (int i = 0; i < 7; ++i) log.Publish(Event("e" + std::to_string(i)));
  std::vector<AgentEvent> kept = log.Since(0);
  EXPECT_EQ(Seqs(kept), (std::vector<uint64_t>{5, 6, 7}));
  EXPECT_EQ(kept[0].kind, "e4");
  EXPECT_EQ(kept[2].kind, "e6");
  EXPECT_EQ(log.last_seq(), 7u);
}

TEST(EventLog, DefaultCapacityIsAThousandAndZeroMeansOne) {
  testing::FakeClock clock;
  EXPECT_EQ(EventLog(clock).capacity(), 1000u);
  EventLog one(clock, 0);
  EXPECT_EQ(one.capacity(), 1u);
  one.Publish(Event("a"));
  one.Publish(Event("b"));
  EXPECT_EQ(Seqs(one.Since(0)), (std::vector<uint64_t>{2}));
}

TEST(EventLog, SinceReturnsOnlyLaterEventsOldestFirst) {
  testing::FakeClock clock;
  EventLog log(clock, 10);
  EXPECT_TRUE(log.Since(0).empty());
  for (int i = 0; i < 5; ++i) log.Publish(Event("e"));
  EXPECT_EQ(Seqs(log.Since(3)), (std::vector<uint64_t>{4, 5}));
  EXPECT_TRUE(log.Since(5).empty());
  EXPECT_TRUE(log.Since(500).empty());
  EXPECT_TRUE(log.Since(std::numeric_limits<uint64_t>::max()).empty());
  for (int i = 0; i < 10; ++i) log.Publish(Event("e"));
  // Asking for events that fell off gives what is kept.
  EXPECT_EQ(Seqs(log.Since(2)).front(), 6u);
  EXPECT_EQ(log.Since(2).size(), 10u);
}

TEST(EventLog, SubscriptionReadsTheBacklogThenLiveEventsAndIsWokenOnce) {
  testing::FakeClock clock;
  EventLog log(clock);
  log.Publish(Event("a"));
  log.Publish(Event("b"));
  int wakeups = 0;
  std::shared_ptr<EventSubscription> sub = log.Subscribe(0, [&] { ++wakeups; });
  EXPECT_EQ(log.subscriber_count(), 1u);
  EXPECT_EQ(sub->Next()->kind, "a");
  // Not waiting yet: a publish while it reads does not wake it.
  log.Publish(Event("c"));
  EXPECT_EQ(wakeups, 0);
  EXPECT_EQ(sub->Next()->kind, "b");
  EXPECT_EQ(sub->Next()->kind, "c");
  EXPECT_FALSE(sub->Next().has_value());
  EXPECT_FALSE(sub->ended());
  log.Publish(Event("d"));
  log.Publish(Event("e"));
  EXPECT_EQ(wakeups, 1);  // woken once, then it reads all that came
  EXPECT_EQ(sub->Next()->seq, 4u);
  EXPECT_EQ(sub->Next()->seq, 5u);
  EXPECT_FALSE(sub->Next().has_value());
  log.Publish(Event("f"));
  EXPECT_EQ(wakeups, 2);
}

TEST(EventLog, SubscriptionStartsAfterTheGivenSeq) {
  testing::FakeClock clock;
  EventLog log(clock);
  for (int i = 0; i < 4; ++i) log.Publish(Event("e"));
  std::shared_ptr<EventSubscription> sub = log.Subscribe(2, [] {});
  EXPECT_EQ(sub->Next()->seq, 3u);
  EXPECT_EQ(sub->Next()->seq, 4u);
  EXPECT_FALSE(sub->Next().has_value());
}

TEST(EventLog, HistoryThatFellOffBeforeSubscribingIsNotReportedAsDropped) {
  testing::FakeClock clock;
  EventLog log(clock, 2);
  for (int i = 0; i < 5; ++i) log.Publish(Event("e"));
  std::shared_ptr<EventSubscription> sub = log.Subscribe(0, [] {});
  EXPECT_EQ(sub->Next()->seq, 4u);
  EXPECT_EQ(sub->Next()->seq, 5u);
}

TEST(EventLog, SlowSubscriberGetsOneDroppedEventWithTheCountThenTheOldestKept) {
  testing::FakeClock clock;
  EventLog log(clock, 4);
  std::shared_ptr<EventSubscription> sub = log.Subscribe(0, [] {});
  log.Publish(Event("first"));
  EXPECT_EQ(sub->Next()->seq, 1u);
  for (int i = 0; i < 10; ++i) log.Publish(Event("e"));  // seq 2..11; the ring keeps 8..11
  std::optional<AgentEvent> dropped = sub->Next();
  ASSERT_TRUE(dropped.has_value());
  EXPECT_EQ(dropped->kind, kEventsDroppedKind);
  EXPECT_EQ(dropped->seq, 0u);
  EXPECT_EQ(dropped->time_unix_ms, WallMs(clock));
  EXPECT_EQ(dropped->fields["count"], 6);
  EXPECT_EQ(dropped->fields["first_seq"], 2);
  EXPECT_EQ(dropped->fields["last_seq"], 7);
  EXPECT_NE(dropped->message.find("6 events were dropped"), std::string::npos) << dropped->message;
  EXPECT_EQ(sub->Next()->seq, 8u);
  EXPECT_EQ(sub->Next()->seq, 9u);
  EXPECT_EQ(sub->Next()->seq, 10u);
  EXPECT_EQ(sub->Next()->seq, 11u);
  EXPECT_FALSE(sub->Next().has_value());
  // A fast reader next to it loses nothing.
  std::shared_ptr<EventSubscription> fast = log.Subscribe(log.last_seq(), [] {});
  log.Publish(Event("x"));
  EXPECT_EQ(fast->Next()->seq, 12u);
}

TEST(EventLog, UnsubscribeEndsTheSubscriptionAndStopsWakeups) {
  testing::FakeClock clock;
  EventLog log(clock);
  int wakeups = 0;
  std::shared_ptr<EventSubscription> sub = log.Subscribe(0, [&] { ++wakeups; });
  EXPECT_FALSE(sub->Next().has_value());
  log.Unsubscribe(sub);
  log.Unsubscribe(sub);  // idempotent
  log.Unsubscribe(nullptr);
  EXPECT_EQ(log.subscriber_count(), 0u);
  EXPECT_TRUE(sub->ended());
  log.Publish(Event("e"));
  EXPECT_EQ(wakeups, 0);
  EXPECT_FALSE(sub->Next().has_value());
}

TEST(EventLog, UnsubscribeWaitsForAWakeupThatIsRunning) {
  testing::FakeClock clock;
  EventLog log(clock);
  std::atomic<bool> started = false;
  std::atomic<bool> finished = false;
  std::shared_ptr<EventSubscription> sub = log.Subscribe(0, [&] {
    started = true;
    std::this_thread::sleep_for(100ms);
    finished = true;
  });
  EXPECT_FALSE(sub->Next().has_value());
  std::thread publisher([&] { log.Publish(Event("e")); });
  while (!started) std::this_thread::yield();
  log.Unsubscribe(sub);
  EXPECT_TRUE(finished);  // its captures may be freed now
  publisher.join();
}

TEST(EventLog, EndSubscriptionsWakesEveryReaderAndEndsLaterOnesToo) {
  testing::FakeClock clock;
  EventLog log(clock);
  log.Publish(Event("kept"));
  int wakeups = 0;
  std::shared_ptr<EventSubscription> waiting = log.Subscribe(1, [&] { ++wakeups; });
  EXPECT_FALSE(waiting->Next().has_value());
  std::shared_ptr<EventSubscription> busy = log.Subscribe(0, [&] { ++wakeups; });  // has not read yet
  log.EndSubscriptions();
  EXPECT_EQ(wakeups, 2);
  EXPECT_TRUE(waiting->ended());
  EXPECT_TRUE(busy->ended());
  EXPECT_FALSE(busy->Next().has_value());
  EXPECT_EQ(log.subscriber_count(), 0u);
  std::shared_ptr<EventSubscription> late = log.Subscribe(0, [&] { ++wakeups; });
  EXPECT_TRUE(late->ended());
  EXPECT_FALSE(late->Next().has_value());
  // The log itself keeps working (the guard still publishes while stopping).
  EXPECT_EQ(log.Publish(Event("after")), 2u);
  EXPECT_EQ(log.Since(0).size(), 2u);
  EXPECT_EQ(wakeups, 2);
  log.EndSubscriptions();  // idempotent
  log.Unsubscribe(waiting);
}

TEST(EventLog, ConcurrentPublishersGetUniqueSeqsAndAReaderAccountsForEveryOne) {
  testing::FakeClock clock;
  constexpr size_t kCapacity = 100;
  constexpr int kThreads = 8;
  constexpr int kPerThread = 2000;
  constexpr uint64_t kTotal = uint64_t{kThreads} * kPerThread;
  EventLog log(clock, kCapacity);

  std::mutex wake_mutex;
  std::condition_variable wake_cv;
  bool woken = false;
  std::shared_ptr<EventSubscription> sub = log.Subscribe(0, [&] {
    std::lock_guard lock(wake_mutex);
    woken = true;
    wake_cv.notify_one();
  });
  uint64_t delivered = 0;
  uint64_t dropped = 0;
  uint64_t last = 0;
  bool in_order = true;
  std::thread reader([&] {
    while (delivered + dropped < kTotal) {
      std::optional<AgentEvent> e = sub->Next();
      if (!e) {
        std::unique_lock lock(wake_mutex);
        wake_cv.wait_for(lock, 1s, [&] { return woken; });
        woken = false;
        continue;
      }
      if (e->kind == kEventsDroppedKind) {
        uint64_t first = e->fields["first_seq"].get<uint64_t>();
        in_order = in_order && first == last + 1;
        last = e->fields["last_seq"].get<uint64_t>();
        dropped += e->fields["count"].get<uint64_t>();
      } else {
        in_order = in_order && e->seq == last + 1;
        last = e->seq;
        ++delivered;
      }
    }
  });

  std::vector<std::vector<uint64_t>> seqs(kThreads);
  std::vector<std::thread> publishers;
  for (int t = 0; t < kThreads; ++t) {
    publishers.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) seqs[static_cast<size_t>(t)].push_back(log.Publish(Event("e")));
    });
  }
  for (std::thread& p : publishers) p.join();
  reader.join();

  std::set<uint64_t> all;
  for (const std::vector<uint64_t>& s : seqs) {
    EXPECT_TRUE(std::is_sorted(s.begin(), s.end()));  // each thread's events in its order
    all.insert(s.begin(), s.end());
  }
  EXPECT_EQ(all.size(), kTotal);
  EXPECT_EQ(*all.begin(), 1u);
  EXPECT_EQ(*all.rbegin(), kTotal);
  EXPECT_TRUE(in_order);
  EXPECT_EQ(last, kTotal);
  EXPECT_EQ(delivered + dropped, kTotal);
  std::vector<AgentEvent> kept = log.Since(0);
  ASSERT_EQ(kept.size(), kCapacity);
  EXPECT_EQ(kept.front().seq, kTotal - kCapacity + 1);
  EXPECT_EQ(kept.back().seq, kTotal);
  EXPECT_TRUE(std::is_sorted(kept.begin(), kept.end(),
                             [](const AgentEvent& a, const AgentEvent& b) { return a.seq < b.seq; }));
  log.Unsubscribe(sub);
}

}  // namespace
}  // namespace gpuctl::events

namespace gpuctl::events {
namespace {

// A job printing thousands of exceptions overruns the ring: the events that
// decide something before them are still given, in seq order, to a reader
// of the backlog, to a new subscriber, and to one that fell behind.
TEST(EventLog, DecidingEventsOutliveAFloodOfTracebacks) {
  testing::FakeClock clock;
  EventLog log(clock, 10);
  auto behind = log.Subscribe(0, [] {});
  const uint64_t remediation = log.Publish(Event("oom_remediation", "noisy"));
  const uint64_t kill = log.Publish(Event("guard_kill", "hog"));
  for (int i = 0; i < 100; ++i) log.Publish(Event("traceback", "noisy"));
  std::vector<AgentEvent> backlog = log.Since(0);
  ASSERT_EQ(backlog.size(), 12u);
  EXPECT_EQ(backlog[0].seq, remediation);
  EXPECT_EQ(backlog[1].seq, kill);
  EXPECT_EQ(backlog[2].kind, "traceback");
  EXPECT_TRUE(std::is_sorted(backlog.begin(), backlog.end(),
                             [](const AgentEvent& a, const AgentEvent& b) { return a.seq < b.seq; }));
  EXPECT_EQ(log.Since(remediation).front().seq, kill);

  auto fresh = log.Subscribe(0, [] {});
  EXPECT_EQ(fresh->Next()->seq, remediation);
  EXPECT_EQ(fresh->Next()->seq, kill);
  EXPECT_EQ(fresh->Next()->kind, "traceback");

  std::optional<AgentEvent> notice = behind->Next();
  ASSERT_TRUE(notice.has_value());
  EXPECT_EQ(notice->kind, kEventsDroppedKind);
  EXPECT_EQ(notice->fields["count"], 90) << "the 92 that fell off, less the 2 still given";
  EXPECT_EQ(behind->Next()->seq, remediation);
  EXPECT_EQ(behind->Next()->seq, kill);
  EXPECT_EQ(behind->Next()->kind, "traceback");
}

// Only so many are kept aside, each kind its share: a stream of short
// jobs' ends does not push out the guard kill before them.
TEST(EventLog, KeptAsideAreTheNewestDecidingEventsOfEachKind) {
  testing::FakeClock clock;
  EventLog log(clock, 4);
  const uint64_t kill = log.Publish(Event("guard_kill"));
  for (size_t i = 0; i < EventLog::kDecidingKept + 20; ++i) log.Publish(Event("job_ended"));
  for (int i = 0; i < 10; ++i) log.Publish(Event("traceback"));
  std::vector<AgentEvent> backlog = log.Since(0);
  ASSERT_EQ(backlog.size(), 1 + EventLog::kDecidingKeptPerKind + 4);
  EXPECT_EQ(backlog.front().seq, kill);
  EXPECT_EQ(backlog[1].kind, "job_ended");
  EXPECT_EQ(backlog[1].seq, kill + EventLog::kDecidingKept + 20 - EventLog::kDecidingKeptPerKind + 1);
}

}  // namespace
}  // namespace gpuctl::events
