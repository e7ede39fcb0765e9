// PlanWake: the usage lines a v1 threshold is armed at follow the cache, and
// the poll shortens as the kill line nears.
#include "agents/guard/wake_plan.h"

#include <gtest/gtest.h>

namespace gpuctl::guard {
namespace {

using namespace std::chrono_literals;

GuardConfig TwoGiBDomain() {
  GuardConfig config;
  config.domain = {GuardDomain::Kind::kCgroup, "/lxc/c1"};
  config.reserve_bytes = 256 * kMiB;  // warn line 512 MiB (margin = reserve)
  return config;
}

DomainReading CgroupOf(uint64_t usage, uint64_t cache) {
  CgroupMemory cgroup{2 * kGiB, usage, cache};
  DomainReading host{64 * kGiB, 40 * kGiB, std::nullopt, std::nullopt};
  return CgroupReading(cgroup, host, std::nullopt);
}

WakePlan Plan(const DomainReading& reading, const GuardConfig& config) {
  return PlanWake(reading, Decide(reading, config), config);
}

TEST(PlanWakeTest, UsageLinesAreTheGuardsLinesShiftedByTheCacheNow) {
  const GuardConfig config = TwoGiBDomain();
  // 512 MiB of work and no cache: available 1.5 GiB, warn at 512 MiB left
  // (usage 1.5 GiB), kill at 256 MiB left (usage 1.75 GiB).
  EXPECT_EQ(Plan(CgroupOf(512 * kMiB, 0), config).usage_lines,
            (std::vector<uint64_t>{1536 * kMiB, 1792 * kMiB}));
  // The same work with 256 MiB of cache: both lines 256 MiB further on in
  // usage; the kill line reaches the limit, where usage never crosses.
  EXPECT_EQ(Plan(CgroupOf(768 * kMiB, 256 * kMiB), config).usage_lines, (std::vector<uint64_t>{1792 * kMiB}));
  // Below the warn line only the kill line is ahead.
  EXPECT_EQ(Plan(CgroupOf(1600 * kMiB, 0), config).usage_lines, (std::vector<uint64_t>{1792 * kMiB}));
  // Below the kill line there is nothing ahead to arm.
  EXPECT_TRUE(Plan(CgroupOf(1900 * kMiB, 0), config).usage_lines.empty());
}

TEST(PlanWakeTest, TheHostDomainHasNoUsageLines) {
  GuardConfig config;
  config.reserve_bytes = 2 * kGiB;
  EXPECT_TRUE(Plan(DomainReading{64 * kGiB, 30 * kGiB, std::nullopt, std::nullopt}, config).usage_lines.empty());
}

TEST(PlanWakeTest, ThePollIsTheTimeTheFastestGrowthTakesToTheKillLine) {
  GuardConfig config;
  config.reserve_bytes = 2 * kGiB;
  auto poll_at = [&](uint64_t available) {
    return Plan(DomainReading{64 * kGiB, available, std::nullopt, std::nullopt}, config).poll;
  };
  EXPECT_EQ(poll_at(30 * kGiB), 100ms) << "far away: the configured backstop";
  // 400 MiB above the warn line (2.4 GiB above the kill line) is 300 ms at
  // 8 GiB/s: still the backstop. 400 MiB above the kill line is below the
  // warn line: the fast poll.
  EXPECT_EQ(poll_at(4 * kGiB + 400 * kMiB), 100ms);
  EXPECT_EQ(poll_at(2 * kGiB + 400 * kMiB), kFastPoll);
  // With a warn margin of 0 the last stretch shortens the poll on its own.
  config.warn_margin_bytes = 1;
  EXPECT_EQ(poll_at(2 * kGiB + 400 * kMiB), 48ms) << "400 MiB at 8 GiB/s";
  EXPECT_EQ(poll_at(2 * kGiB + 20 * kMiB), kFastPoll) << "never below the fast poll";
  EXPECT_EQ(poll_at(1 * kGiB), kFastPoll) << "below the kill line";
}

TEST(PlanWakeTest, PsiPressureAboveTheLinesPollsFast) {
  GuardConfig config;
  config.reserve_bytes = 2 * kGiB;
  EXPECT_EQ(Plan(DomainReading{64 * kGiB, 30 * kGiB, 50.0, std::nullopt}, config).poll, kFastPoll);
}

}  // namespace
}  // namespace gpuctl::guard
