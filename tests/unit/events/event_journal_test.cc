// The event log across agent restarts: its journal on disk, seq that keeps
// rising, rotation that bounds it, torn lines skipped.
#include "agents/events/event_journal.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "agents/events/event_log.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/temp_dir.h"

namespace gpuctl::events {
namespace {

using gpuctl::testing::FakeClock;
using gpuctl::testing::TempDir;

AgentEvent JournalEvent(const std::string& kind) {
  AgentEvent e;
  e.kind = kind;
  e.job = "j";
  e.message = "m";
  return e;
}

TEST(EventJournalTest, SeqKeepsRisingAcrossRestarts) {
  TempDir dir;
  FakeClock clock;
  {
    EventLog first(clock, 100, EventJournal::Open(dir.path() + "/events").value());
    EXPECT_EQ(first.Publish(JournalEvent("job_started")), 1u);
    EXPECT_EQ(first.Publish(JournalEvent("guard_kill")), 2u);
  }
  EventLog second(clock, 100, EventJournal::Open(dir.path() + "/events").value());
  EXPECT_EQ(second.last_seq(), 2u);
  std::vector<AgentEvent> kept = second.Since(0);
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept[1].kind, "guard_kill");
  // A reader that saw seq 1 before the restart gets the rest, then the new.
  EXPECT_EQ(second.Publish(JournalEvent("job_ended")), 3u);
  std::vector<AgentEvent> after = second.Since(1);
  ASSERT_EQ(after.size(), 2u);
  EXPECT_EQ(after[0].seq, 2u);
  EXPECT_EQ(after[1].seq, 3u);
  auto sub = second.Subscribe(2, [] {});
  std::optional<AgentEvent> next = sub->Next();
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->seq, 3u);
  second.Unsubscribe(sub);
}

TEST(EventJournalTest, MoreThanTheRingKeepsTheNewestAndTheirPlaces) {
  TempDir dir;
  FakeClock clock;
  {
    EventLog first(clock, 4, EventJournal::Open(dir.path() + "/events").value());
    for (int i = 0; i < 10; ++i) first.Publish(JournalEvent("e" + std::to_string(i)));
  }
  EventLog second(clock, 4, EventJournal::Open(dir.path() + "/events").value());
  std::vector<AgentEvent> kept = second.Since(0);
  ASSERT_EQ(kept.size(), 4u);
  EXPECT_EQ(kept.front().seq, 7u);
  EXPECT_EQ(kept.back().kind, "e9");
  EXPECT_EQ(second.Publish(JournalEvent("e10")), 11u);
  EXPECT_EQ(second.Since(9).size(), 2u);
}

TEST(EventJournalTest, RotationBoundsTheFilesAndTornLinesAreSkipped) {
  TempDir dir;
  std::unique_ptr<EventJournal> journal = EventJournal::Open(dir.path() + "/events", 4096).value();
  AgentEvent e = JournalEvent("x");
  e.message = std::string(200, 'm');
  for (uint64_t seq = 1; seq <= 200; ++seq) {
    e.seq = seq;
    ASSERT_TRUE(journal->Append(e).ok());
  }
  EXPECT_LE(std::filesystem::file_size(dir.path() + "/events/events.jsonl"), 4096u);
  EXPECT_LE(std::filesystem::file_size(dir.path() + "/events/events.jsonl.1"), 4096u);
  // A crash mid-write: half a line at the end.
  dir.WriteFile("events/torn", "");
  {
    std::ofstream out(dir.path() + "/events/events.jsonl", std::ios::app);
    out << "{\"seq\": 201, \"kind\": \"hal";
  }
  std::vector<AgentEvent> recent = journal->LoadRecent(1000);
  ASSERT_FALSE(recent.empty());
  EXPECT_EQ(recent.back().seq, 200u);
  for (size_t i = 1; i < recent.size(); ++i) EXPECT_EQ(recent[i].seq, recent[i - 1].seq + 1);
}

TEST(EventJournalTest, LinesRoundTripWhateverTheBytes) {
  AgentEvent e = JournalEvent("cuda_oom");
  e.seq = 5;
  e.time_unix_ms = 1234;
  e.message = "1.2\xe9 GiB is free";
  e.fields = {{"gpu", 0}};
  Result<AgentEvent> back = EventJournal::FromLine(EventJournal::ToLine(e));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->seq, 5u);
  EXPECT_EQ(back->message, "1.2\xEF\xBF\xBD GiB is free");
  EXPECT_EQ(back->fields["gpu"], 0);
  EXPECT_FALSE(EventJournal::FromLine("{}").ok());
  EXPECT_FALSE(EventJournal::FromLine("not json").ok());
}

// Found by tests/fuzz/event_journal_fuzz: a time of 17145684000014568400000
// (too big for any integer, so JSON reads it as a double) was converted to
// int64_t, which is undefined behaviour. Such a line is skipped like any
// other that does not parse.
TEST(EventJournalTest, NumbersThatAreNotIntegersOfTheirFieldAreRefused) {
  for (const char* line : {R"({"seq":1,"time_unix_ms":17145684000014568400000,"kind":"k"})",
                           R"({"seq":1e300,"time_unix_ms":0,"kind":"k"})", R"({"seq":-1,"time_unix_ms":0,"kind":"k"})",
                           R"({"seq":1.5,"time_unix_ms":0,"kind":"k"})"}) {
    Result<AgentEvent> e = EventJournal::FromLine(line);
    EXPECT_FALSE(e.ok()) << line;
  }
  EXPECT_TRUE(EventJournal::FromLine(R"({"seq":18446744073709551615,"time_unix_ms":-1,"kind":"k"})").ok());
}

}  // namespace
}  // namespace gpuctl::events
