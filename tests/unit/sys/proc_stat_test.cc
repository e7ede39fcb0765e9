#include "agents/sys/proc_stat.h"

#include <gtest/gtest.h>

namespace gpuctl::sys {
namespace {

// A real line from `cat /proc/self/stat` on Debian 12 (kernel 6.x).
constexpr const char* kCatStat =
    "22683 (cat) R 22678 22678 15032 0 -1 4194304 101 0 0 0 7 3 0 0 20 0 1 0 953064 3133440 "
    "418 18446744073709551615 94440088272896 94440088292777 140730446272752 0 0 0 0 0 0 0 0 0 "
    "17 1 0 0 0 0 0 94440088308784 94440088310400 94440559534080 140730446281345 "
    "140730446281365 140730446281365 140730446282731 0\n";

TEST(ParseProcStat, ReadsTheFieldsOfARealLine) {
  auto stat = ParseProcStat(kCatStat);
  ASSERT_TRUE(stat.ok()) << stat.status().ToString();
  EXPECT_EQ(stat->pid, 22683);
  EXPECT_EQ(stat->comm, "cat");
  EXPECT_EQ(stat->state, 'R');
  EXPECT_EQ(stat->ppid, 22678);
  EXPECT_EQ(stat->pgrp, 22678);
  EXPECT_EQ(stat->session, 15032);
  EXPECT_EQ(stat->utime_ticks, 7u);
  EXPECT_EQ(stat->stime_ticks, 3u);
  EXPECT_EQ(stat->num_threads, 1);
  EXPECT_EQ(stat->start_time_ticks, 953064u);
  EXPECT_EQ(stat->vsize_bytes, 3133440u);
  EXPECT_EQ(stat->rss_pages, 418);
  EXPECT_EQ(stat->start_code, 94440088272896u);
  EXPECT_EQ(stat->end_code, 94440088292777u);
  EXPECT_EQ(stat->start_stack, 140730446272752u);
  EXPECT_FALSE(stat->exited());
}

// A line that ends at rss (what older captures and the fuzz corpus hold)
// still parses; the fields after it read as unknown (0).
TEST(ParseProcStat, ALineEndingAtRssLeavesTheLayoutUnknown) {
  auto stat = ParseProcStat("7 (sh) S 1 7 7 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 55 4096 3");
  ASSERT_TRUE(stat.ok()) << stat.status().ToString();
  EXPECT_EQ(stat->rss_pages, 3);
  EXPECT_EQ(stat->start_stack, 0u);
}

// A process may call itself "(a) b)" (prctl PR_SET_NAME): only the last ')'
// ends comm, and a parser splitting on spaces or the first ')' misreads
// every field after it.
TEST(ParseProcStat, CommWithSpacesAndParenthesesIsCutAtTheLastParen) {
  auto stat = ParseProcStat(
      "4242 ((a) b)) S 1 4242 4242 0 -1 4194560 5 0 0 0 1 2 0 0 20 0 3 0 123456 999 77 0 0 0");
  ASSERT_TRUE(stat.ok()) << stat.status().ToString();
  EXPECT_EQ(stat->pid, 4242);
  EXPECT_EQ(stat->comm, "(a) b)");
  EXPECT_EQ(stat->state, 'S');
  EXPECT_EQ(stat->ppid, 1);
  EXPECT_EQ(stat->pgrp, 4242);
  EXPECT_EQ(stat->num_threads, 3);
  EXPECT_EQ(stat->start_time_ticks, 123456u);
  EXPECT_EQ(stat->rss_pages, 77);
}

TEST(ParseProcStat, CommThatLooksLikeFieldsDoesNotShiftThem) {
  auto stat = ParseProcStat(
      "7 (x) Z 9 9 9 0) R 1 2 3 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 555 0 0 0");
  ASSERT_TRUE(stat.ok()) << stat.status().ToString();
  EXPECT_EQ(stat->comm, "x) Z 9 9 9 0");
  EXPECT_EQ(stat->state, 'R');
  EXPECT_EQ(stat->ppid, 1);
  EXPECT_EQ(stat->pgrp, 2);
  EXPECT_EQ(stat->session, 3);
  EXPECT_EQ(stat->start_time_ticks, 555u);
}

TEST(ParseProcStat, ZombieAndDeadStatesCountAsExited) {
  auto zombie = ParseProcStat("5 (defunct) Z 1 5 5 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 10 0 0");
  ASSERT_TRUE(zombie.ok()) << zombie.status().ToString();
  EXPECT_EQ(zombie->state, 'Z');
  EXPECT_TRUE(zombie->exited());
  auto dead = ParseProcStat("5 (gone) X 1 5 5 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 10 0 0");
  ASSERT_TRUE(dead.ok()) << dead.status().ToString();
  EXPECT_TRUE(dead->exited());
}

TEST(ParseProcStat, EmptyCommIsAllowed) {
  auto stat = ParseProcStat("8 () S 1 8 8 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 10 0 0");
  ASSERT_TRUE(stat.ok()) << stat.status().ToString();
  EXPECT_EQ(stat->comm, "");
  EXPECT_EQ(stat->pgrp, 8);
}

TEST(ParseProcStat, RejectsTextThatIsNotAStatLine) {
  for (const char* bad : {"", "\n", "hello", "12 cat R 1 2 3", "abc (cat) R 1 1 1 0 -1 0 0 0 0 0 "
                          "0 0 0 0 20 0 1 0 10 0 0"}) {
    auto stat = ParseProcStat(bad);
    ASSERT_FALSE(stat.ok()) << "accepted '" << bad << "'";
    EXPECT_EQ(stat.status().code(), ErrorCode::kInvalidArgument);
  }
}

TEST(ParseProcStat, RejectsATruncatedLine) {
  // Ends before field 24 (rss).
  auto stat = ParseProcStat("22683 (cat) R 22678 22678 15032 0 -1 4194304 101 0 0 0 7 3 0 0 20 0 1 0 953064");
  ASSERT_FALSE(stat.ok());
  EXPECT_EQ(stat.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(stat.status().message().find("fields"), std::string::npos) << stat.status().message();
}

TEST(ParseProcStat, RejectsANonNumericField) {
  auto stat = ParseProcStat("1 (init) S 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 1x 0 0");
  ASSERT_FALSE(stat.ok());
  EXPECT_EQ(stat.status().code(), ErrorCode::kInvalidArgument);
  auto bad_state = ParseProcStat("1 (init) SS 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 1 0 0");
  ASSERT_FALSE(bad_state.ok());
}

}  // namespace
}  // namespace gpuctl::sys
