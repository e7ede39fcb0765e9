#include "agents/guard/guard_config.h"
#include "common/units.h"

#include <gtest/gtest.h>

namespace gpuctl::guard {
namespace {

using namespace std::chrono_literals;

TEST(GuardDomain, ParsesHostAndCgroup) {
  EXPECT_EQ(ParseGuardDomain("host").value_or({}).kind, GuardDomain::Kind::kHost);
  auto cgroup = ParseGuardDomain("cgroup:/lxc/c1");
  ASSERT_TRUE(cgroup.ok()) << cgroup.status().ToString();
  EXPECT_EQ(*cgroup, (GuardDomain{GuardDomain::Kind::kCgroup, "/lxc/c1"}));
  EXPECT_EQ(FormatGuardDomain(*cgroup), "cgroup:/lxc/c1");
  EXPECT_EQ(FormatGuardDomain(GuardDomain{}), "host");
}

TEST(GuardDomain, RefusesOtherFormsWithTheAcceptedOnes) {
  for (const char* bad : {"", "Host", "cgroup:", "cgroup:lxc/c1", "/sys/fs/cgroup/x"}) {
    auto d = ParseGuardDomain(bad);
    ASSERT_FALSE(d.ok()) << bad;
    EXPECT_EQ(d.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(d.status().message().find("cgroup:/"), std::string::npos) << d.status().message();
  }
}

TEST(GuardConfig, DefaultReserveIsOneGibOrThreePercentCappedAtAnEighth) {
  EXPECT_EQ(DefaultReserveBytes(16 * kGiB), 1 * kGiB);
  EXPECT_EQ(DefaultReserveBytes(288 * kGiB), 288 * kGiB / 100 * 3);
  EXPECT_EQ(DefaultReserveBytes(4 * kGiB), 512 * kMiB);
  EXPECT_EQ(DefaultReserveBytes(1 * kGiB), 128 * kMiB);
  GuardConfig config;
  EXPECT_EQ(WarnLineBytes(config, 16 * kGiB), 2 * kGiB) << "margin defaults to the reserve";
  config.reserve_bytes = 300 * kMiB;
  config.warn_margin_bytes = 100 * kMiB;
  EXPECT_EQ(ReserveBytes(config, 16 * kGiB), 300 * kMiB);
  EXPECT_EQ(WarnLineBytes(config, 16 * kGiB), 400 * kMiB);
  config.warn_margin_bytes = UINT64_MAX;
  EXPECT_EQ(WarnLineBytes(config, 16 * kGiB), UINT64_MAX) << "saturates";
  EXPECT_DOUBLE_EQ(PsiFullPercent(GuardConfig{}), 10.0);
}

TEST(GuardConfig, DefaultsAreValidForHostsAndSmallDomains) {
  GuardConfig config;
  EXPECT_TRUE(Validate(config, 288 * kGiB).ok());
  EXPECT_TRUE(Validate(config, 1 * kGiB).ok()) << Validate(config, 1 * kGiB).ToString();
  EXPECT_EQ(config.protected_names, (std::vector<std::string>{"sshd", "sshd-session"}));
}

// Each refusal names the setting and what to do.
void ExpectRefused(const GuardConfig& config, uint64_t total, std::string_view words) {
  Status s = Validate(config, total);
  ASSERT_EQ(s.code(), ErrorCode::kInvalidArgument) << words;
  EXPECT_NE(s.message().find(words), std::string::npos) << s.message();
}

TEST(GuardConfig, RefusesWhatCannotWork) {
  GuardConfig reserve_above_ram;
  reserve_above_ram.reserve_bytes = 300 * kGiB;
  ExpectRefused(reserve_above_ram, 256 * kGiB, "guard reserve 300");
  ExpectRefused(reserve_above_ram, 256 * kGiB, "give a smaller reserve");

  GuardConfig zero;
  zero.reserve_bytes = 0;
  ExpectRefused(zero, 16 * kGiB, "reserve of 0");

  GuardConfig warn_above_ram;
  warn_above_ram.reserve_bytes = 1 * kGiB;
  warn_above_ram.warn_margin_bytes = 15 * kGiB;
  ExpectRefused(warn_above_ram, 16 * kGiB, "warn margin");

  GuardConfig psi;
  psi.psi_full_window = 100ms;
  ExpectRefused(psi, 16 * kGiB, "PSI");
  psi.psi_full_window = 1s;
  psi.psi_full_stall = 2s;
  ExpectRefused(psi, 16 * kGiB, "PSI");

  GuardConfig slow;
  slow.poll_interval = 1s;
  ExpectRefused(slow, 16 * kGiB, "poll interval");

  GuardConfig names;
  names.protected_names = {"sshd", "a-very-long-daemon-name"};
  ExpectRefused(names, 16 * kGiB, "a-very-long-daemon-name");
  names.protected_names = {""};
  ExpectRefused(names, 16 * kGiB, "1 to 15 characters");

  GuardConfig domain;
  domain.domain = GuardDomain{GuardDomain::Kind::kCgroup, "lxc/c1"};
  ExpectRefused(domain, 16 * kGiB, "absolute");

  ExpectRefused(GuardConfig{}, 0, "no memory");
}

}  // namespace
}  // namespace gpuctl::guard
