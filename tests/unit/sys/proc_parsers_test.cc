#include "agents/sys/proc_parsers.h"

#include <gtest/gtest.h>

namespace gpuctl::sys {
namespace {

// --- /proc/meminfo ---------------------------------------------------------

TEST(ParseMeminfo, ConvertsKilobytesToBytesAndKeepsPlainNumbers) {
  auto info = ParseMeminfo(
      "MemTotal:       131899444 kB\n"
      "MemFree:        120001234 kB\n"
      "MemAvailable:   125000000 kB\n"
      "Active(anon):       1024 kB\n"
      "SwapTotal:        8388604 kB\n"
      "SwapFree:         8388000 kB\n"
      "HugePages_Total:       4\n"
      "Hugepagesize:       2048 kB\n");
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->mem_total_bytes(), 131899444ull * 1024);
  EXPECT_EQ(info->mem_available_bytes(), 125000000ull * 1024);
  EXPECT_EQ(info->swap_total_bytes(), 8388604ull * 1024);
  EXPECT_EQ(info->swap_free_bytes(), 8388000ull * 1024);
  EXPECT_EQ(info->Get("Active(anon)"), 1024ull * 1024);
  EXPECT_EQ(info->Get("HugePages_Total"), 4u);
  EXPECT_EQ(info->Get("Hugepagesize"), 2048ull * 1024);
  EXPECT_EQ(info->Get("NoSuchKey"), 0u);
}

TEST(ParseMeminfo, ToleratesOddSpacingUnknownKeysAndNoFinalNewline) {
  auto info = ParseMeminfo("\n  MemTotal:\t16 kB  \r\nFutureCounter:   7 kB\n\nMemAvailable: 8 kB");
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->mem_total_bytes(), 16u * 1024);
  EXPECT_EQ(info->Get("FutureCounter"), 7u * 1024);
  EXPECT_EQ(info->mem_available_bytes(), 8u * 1024);
}

TEST(ParseMeminfo, EstimatesAvailableOnKernelsWithoutMemAvailable) {
  auto info = ParseMeminfo(
      "MemTotal: 1000 kB\nMemFree: 100 kB\nBuffers: 20 kB\nCached: 300 kB\n");
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->mem_available_bytes(), 420u * 1024);
}

TEST(ParseMeminfo, AZeroMemAvailableIsTakenAsIsNotEstimated) {
  auto info = ParseMeminfo("MemTotal: 1000 kB\nMemFree: 100 kB\nCached: 300 kB\nMemAvailable: 0 kB\n");
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->mem_available_bytes(), 0u);
}

TEST(ParseMeminfo, RefusesTextWithoutMemTotal) {
  auto info = ParseMeminfo("MemFree: 100 kB\n");
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(info.status().message().find("MemTotal"), std::string::npos);
  EXPECT_FALSE(ParseMeminfo("").ok());
}

TEST(ParseMeminfo, RefusesMalformedLines) {
  for (const char* bad : {"MemTotal 100 kB", "MemFree: lots kB", "MemFree: 12 MB", "MemFree:",
                          "MemFree: 1 kB extra", ": 5 kB", "MemFree: -5 kB",
                          "MemFree: 18446744073709551615 kB"}) {
    auto info = ParseMeminfo(std::string("MemTotal: 100 kB\n") + bad + "\n");
    ASSERT_FALSE(info.ok()) << bad;
    EXPECT_EQ(info.status().code(), ErrorCode::kInvalidArgument) << bad;
    EXPECT_NE(info.status().message().find(bad), std::string::npos) << info.status().message();
  }
}

// --- PSI -------------------------------------------------------------------

TEST(ParsePressure, ReadsSomeAndFull) {
  auto p = ParsePressure(
      "some avg10=1.25 avg60=0.50 avg300=0.10 total=123456\n"
      "full avg10=0.75 avg60=0.25 avg300=0.05 total=65432\n");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_DOUBLE_EQ(p->some.avg10, 1.25);
  EXPECT_DOUBLE_EQ(p->some.avg60, 0.50);
  EXPECT_DOUBLE_EQ(p->some.avg300, 0.10);
  EXPECT_EQ(p->some.total_us, 123456u);
  ASSERT_TRUE(p->full.has_value());
  EXPECT_DOUBLE_EQ(p->full->avg10, 0.75);
  EXPECT_EQ(p->full->total_us, 65432u);
}

TEST(ParsePressure, FullLineIsOptional) {
  auto p = ParsePressure("some avg10=3.00 avg60=2.00 avg300=1.00 total=99");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_DOUBLE_EQ(p->some.avg10, 3.0);
  EXPECT_EQ(p->some.total_us, 99u);
  EXPECT_FALSE(p->full.has_value());
}

TEST(ParsePressure, IgnoresUnknownKeysAndExtraSpaces) {
  auto p = ParsePressure("  some   avg10=1.00 future=7  avg60=2.00 avg300=3.00   total=4 \n\n");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_DOUBLE_EQ(p->some.avg60, 2.0);
  EXPECT_DOUBLE_EQ(p->some.avg300, 3.0);
  EXPECT_EQ(p->some.total_us, 4u);
}

TEST(ParsePressure, RefusesMalformedLines) {
  const char* kFull = "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
  for (const char* bad : {"some avg10=abc avg60=0.00 avg300=0.00 total=0",
                          "some avg10 avg60=0.00 avg300=0.00 total=0",
                          "some avg10=0.00 avg60=0.00 avg300=0.00",
                          "some avg10=0.00 avg10=0.00 avg60=0.00 total=0",
                          "some avg10=0.00 avg60=0.00 avg300=0.00 total=-1",
                          "partial avg10=0.00 avg60=0.00 avg300=0.00 total=0"}) {
    auto p = ParsePressure(std::string(bad) + "\n" + kFull);
    ASSERT_FALSE(p.ok()) << bad;
    EXPECT_EQ(p.status().code(), ErrorCode::kInvalidArgument);
  }
  EXPECT_FALSE(ParsePressure(kFull).ok()) << "a 'some' line is required";
  EXPECT_FALSE(ParsePressure("").ok());
}

// --- /proc/<pid>/cgroup ----------------------------------------------------

TEST(ParseProcCgroup, V2HasOneUnifiedEntry) {
  auto entries = ParseProcCgroup("0::/user.slice/user-1000.slice/session-3.scope\n");
  ASSERT_TRUE(entries.ok()) << entries.status().ToString();
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ((*entries)[0].hierarchy_id, 0);
  EXPECT_TRUE((*entries)[0].controllers.empty());
  EXPECT_EQ((*entries)[0].path, "/user.slice/user-1000.slice/session-3.scope");
}

TEST(ParseProcCgroup, V1SplitsControllerLists) {
  auto entries = ParseProcCgroup(
      "12:name=systemd:/\n"
      "4:memory:/process_api/c1fd56\n"
      "2:cpu,cpuacct:/docker/abc123\n");
  ASSERT_TRUE(entries.ok()) << entries.status().ToString();
  ASSERT_EQ(entries->size(), 3u);
  EXPECT_EQ((*entries)[0].hierarchy_id, 12);
  EXPECT_EQ((*entries)[0].controllers, std::vector<std::string>{"name=systemd"});
  EXPECT_EQ((*entries)[1].controllers, std::vector<std::string>{"memory"});
  EXPECT_EQ((*entries)[1].path, "/process_api/c1fd56");
  EXPECT_EQ((*entries)[2].controllers, (std::vector<std::string>{"cpu", "cpuacct"}));
  EXPECT_EQ((*entries)[2].path, "/docker/abc123");
}

TEST(ParseProcCgroup, HybridMixesV1LinesWithTheUnifiedOne) {
  auto entries = ParseProcCgroup("5:memory:/system.slice/ssh.service\n0::/system.slice/ssh.service");
  ASSERT_TRUE(entries.ok()) << entries.status().ToString();
  ASSERT_EQ(entries->size(), 2u);
  EXPECT_EQ((*entries)[0].controllers, std::vector<std::string>{"memory"});
  EXPECT_EQ((*entries)[1].hierarchy_id, 0);
  EXPECT_TRUE((*entries)[1].controllers.empty());
  EXPECT_EQ((*entries)[1].path, "/system.slice/ssh.service");
}

TEST(ParseProcCgroup, PathMayContainColons) {
  auto entries = ParseProcCgroup("0::/odd:name/x\n");
  ASSERT_TRUE(entries.ok());
  EXPECT_EQ((*entries)[0].path, "/odd:name/x");
}

TEST(ParseProcCgroup, RefusesMalformedLines) {
  for (const char* bad : {"garbage", "x::/", "1:memory", "1:memory:relative", "-1::/", "1:a,,b:/",
                          "1:memory:", ""}) {
    auto entries = ParseProcCgroup(bad);
    ASSERT_FALSE(entries.ok()) << "'" << bad << "'";
    EXPECT_EQ(entries.status().code(), ErrorCode::kInvalidArgument);
  }
}

// --- os-release ------------------------------------------------------------

TEST(ParseOsRelease, ReadsARealDebianFile) {
  auto fields = ParseOsRelease(
      "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n"
      "NAME=\"Debian GNU/Linux\"\n"
      "VERSION_ID=\"12\"\n"
      "VERSION_CODENAME=bookworm\n"
      "ID=debian\n"
      "HOME_URL=\"https://www.debian.org/\"\n");
  EXPECT_EQ(fields["PRETTY_NAME"], "Debian GNU/Linux 12 (bookworm)");
  EXPECT_EQ(fields["VERSION_ID"], "12");
  EXPECT_EQ(fields["VERSION_CODENAME"], "bookworm");
  EXPECT_EQ(fields["HOME_URL"], "https://www.debian.org/");
  EXPECT_EQ(fields.size(), 6u);
}

TEST(ParseOsRelease, HandlesQuotesAndEscapes) {
  auto fields = ParseOsRelease(
      "SINGLE='a \"b\" c'\n"
      "DOUBLE=\"say \\\"hi\\\" \\\\ \\$HOME \\`x\\`\"\n"
      "KEEP=\"tab\\tstays\"\n"
      "BARE=a\\ b\n"
      "EMPTY=\n"
      "TRAILING=ubuntu # a comment\n");
  EXPECT_EQ(fields["SINGLE"], "a \"b\" c");
  EXPECT_EQ(fields["DOUBLE"], "say \"hi\" \\ $HOME `x`");
  EXPECT_EQ(fields["KEEP"], "tab\\tstays") << "inside \"\" only \\\" \\\\ \\$ \\` are escapes";
  EXPECT_EQ(fields["BARE"], "a b");
  EXPECT_EQ(fields["EMPTY"], "");
  EXPECT_EQ(fields["TRAILING"], "ubuntu");
}

TEST(ParseOsRelease, SkipsCommentsBlanksAndBadLines) {
  auto fields = ParseOsRelease(
      "# PRETTY_NAME=\"Not this\"\n"
      "\n"
      "   \n"
      "  ID=arch  \r\n"
      "no equals sign\n"
      "BAD KEY=x\n"
      "1X=y\n"
      "NAME=\"unterminated\n"
      "PRETTY_NAME=\"Arch Linux\"");
  EXPECT_EQ(fields["ID"], "arch");
  EXPECT_EQ(fields["PRETTY_NAME"], "Arch Linux");
  EXPECT_FALSE(fields.contains("NAME"));
  EXPECT_FALSE(fields.contains("1X"));
  EXPECT_EQ(fields.size(), 2u);
}

// --- loadavg, uptime -------------------------------------------------------

TEST(ParseLoadavg, ReadsTheThreeAverages) {
  auto load = ParseLoadavg("0.52 0.58 0.59 1/467 12345\n");
  ASSERT_TRUE(load.ok()) << load.status().ToString();
  EXPECT_DOUBLE_EQ(load->load1, 0.52);
  EXPECT_DOUBLE_EQ(load->load5, 0.58);
  EXPECT_DOUBLE_EQ(load->load15, 0.59);
  auto spaced = ParseLoadavg("  12.00\t3.50  1.25 4/900 77");
  ASSERT_TRUE(spaced.ok());
  EXPECT_DOUBLE_EQ(spaced->load15, 1.25);
}

TEST(ParseLoadavg, RefusesMalformedText) {
  for (const char* bad : {"", "0.5 0.6", "0.5 x 0.7 1/2 3", "-1 0 0 1/1 1", "nan 0 0 1/1 1"}) {
    EXPECT_FALSE(ParseLoadavg(bad).ok()) << bad;
  }
}

TEST(ParseUptime, ReadsSecondsSinceBoot) {
  auto up = ParseUptime("350735.47 234388.90\n");
  ASSERT_TRUE(up.ok()) << up.status().ToString();
  EXPECT_DOUBLE_EQ(*up, 350735.47);
  EXPECT_DOUBLE_EQ(ParseUptime("12.5").value_or(-1), 12.5);
  for (const char* bad : {"", "abc 1.0", "1.0 2.0 3.0", "1.0 x"}) {
    EXPECT_FALSE(ParseUptime(bad).ok()) << bad;
  }
}

// --- CPU lists, status fields ----------------------------------------------

TEST(CountCpuList, CountsRangesAndSingles) {
  EXPECT_EQ(CountCpuList("0-3,8,10-11").value_or(0), 7u);
  EXPECT_EQ(CountCpuList("0").value_or(0), 1u);
  EXPECT_EQ(CountCpuList("0-1\n").value_or(0), 2u);
  EXPECT_EQ(CountCpuList(" 0-3 , 5 ").value_or(0), 5u);
  EXPECT_EQ(CountCpuList("0-127").value_or(0), 128u);
  EXPECT_EQ(CountCpuList("").value_or(99), 0u) << "an empty cpuset is a valid, empty list";
}

TEST(CountCpuList, RefusesMalformedLists) {
  for (const char* bad : {"3-1", "a", "0-", "0,,1", "0,", "-1", "0-3:2/4"}) {
    auto n = CountCpuList(bad);
    ASSERT_FALSE(n.ok()) << bad;
    EXPECT_EQ(n.status().code(), ErrorCode::kInvalidArgument);
  }
}

TEST(FindStatusField, FindsExactKeysTrimmed) {
  const char* status =
      "Name:\tbash\n"
      "State:\tS (sleeping)\n"
      "Cpus_allowed:\t3\n"
      "Cpus_allowed_list:\t0-1  \n"
      "VmRSS:\t    4200 kB";
  EXPECT_EQ(FindStatusField(status, "Name"), "bash");
  EXPECT_EQ(FindStatusField(status, "State"), "S (sleeping)");
  EXPECT_EQ(FindStatusField(status, "Cpus_allowed"), "3");
  EXPECT_EQ(FindStatusField(status, "Cpus_allowed_list"), "0-1");
  EXPECT_EQ(FindStatusField(status, "VmRSS"), "4200 kB");
  EXPECT_EQ(FindStatusField(status, "Cpus"), std::nullopt);
  EXPECT_EQ(FindStatusField("", "Name"), std::nullopt);
}

}  // namespace
}  // namespace gpuctl::sys
