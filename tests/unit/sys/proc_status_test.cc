#include "agents/sys/proc_status.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "agents/sys/host_fs.h"
#include "agents/sys/process_control.h"
#include "tests/fakes/temp_dir.h"

namespace gpuctl::sys {
namespace {

using testing::TempDir;

TEST(ParseProcessUsage, ResidentBytesAndThreadsOrNothing) {
  ProcessUsage usage = ParseProcessUsage("Name:\tgpuctld\nVmRSS:\t   14604 kB\nThreads:\t22\n");
  EXPECT_EQ(usage.resident_bytes, 14604u * 1024);
  EXPECT_EQ(usage.threads, 22u);
  ProcessUsage kernel_thread = ParseProcessUsage("Name:\tkworker/0:1\nThreads:\t1\n");
  EXPECT_FALSE(kernel_thread.resident_bytes.has_value());
  EXPECT_EQ(kernel_thread.threads, 1u);
  ProcessUsage bad = ParseProcessUsage("VmRSS:\t12 MB\nThreads:\t-3\nVmRSS:\t99999999999999999999 kB\n");
  EXPECT_FALSE(bad.resident_bytes.has_value());
  EXPECT_FALSE(bad.threads.has_value());
}

TEST(ParseResidentBytes, BytesNothingOrRefused) {
  Result<std::optional<uint64_t>> rss = ParseResidentBytes("Name:\tpython\nVmRSS:\t  123456 kB\nThreads:\t4\n");
  ASSERT_TRUE(rss.ok());
  EXPECT_EQ(*rss, uint64_t{123456} * 1024);
  Result<std::optional<uint64_t>> none = ParseResidentBytes("Name:\tkworker/0:1\nThreads:\t1\n");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  Result<std::optional<uint64_t>> unit = ParseResidentBytes("VmRSS:\t12 MB\n");
  ASSERT_FALSE(unit.ok());
  EXPECT_EQ(unit.status().message(), "malformed VmRSS '12 MB'");
  EXPECT_FALSE(ParseResidentBytes("VmRSS:\tlots kB\n").ok());
  EXPECT_FALSE(ParseResidentBytes("VmRSS:\t99999999999999999999 kB\n").ok());
  EXPECT_FALSE(ParseResidentBytes("VmRSS:\t18014398509481984 kB\n").ok()) << "2^54 KiB overflows bytes";
}

TEST(ParseNsPids, ReadsEachNamespaceFromOursDown) {
  EXPECT_EQ(ParseNsPids("Name:\tsleep\nNSpid:\t4242\t17\nNSpgid:\t4242\t17\n"), (std::vector<int64_t>{4242, 17}));
  EXPECT_EQ(ParseNsPids("NSpid:\t1\n"), (std::vector<int64_t>{1}));
  EXPECT_EQ(ParseNsPids("NSpid:\t9\t8\t7"), (std::vector<int64_t>{9, 8, 7}));  // no final newline
}

TEST(ParseNsPids, MissingOrMalformedIsEmpty) {
  EXPECT_TRUE(ParseNsPids("Name:\tsleep\nPid:\t4242\n").empty());  // before Linux 4.1
  EXPECT_TRUE(ParseNsPids("NSpid:\t4242\tx17\n").empty());
  EXPECT_TRUE(ParseNsPids("NSpid:\t4242\t-17\n").empty());
  EXPECT_TRUE(ParseNsPids("NSpid:\t4242\t0\n").empty());
  EXPECT_TRUE(ParseNsPids("XNSpid:\t4242\n").empty());
  EXPECT_TRUE(ParseNsPids("").empty());
}

// A fixture /proc: 100 is pid 17 in container A, 200 pid 17 in container B,
// 300 is pid 17 of nothing (our namespace only), 400 has no NSpid line.
class HostPidInContainerTest : public ::testing::Test {
 protected:
  HostPidInContainerTest() {
    dir_.MakeDir("lxc/a/rootfs");
    dir_.MakeDir("lxc/b/rootfs");
    Process(100, "NSpid:\t100\t17\n", "lxc/a/rootfs");
    Process(200, "NSpid:\t200\t17\n", "lxc/b/rootfs");
    Process(300, "NSpid:\t17\n", "lxc/a/rootfs");
    Process(400, "Name:\told\n", "lxc/a/rootfs");
  }
  void Process(int pid, const std::string& status, const std::string& root) {
    dir_.WriteFile("proc/" + std::to_string(pid) + "/status", "Name:\tx\n" + status);
    std::filesystem::create_symlink(dir_.path() + "/" + root, dir_.path() + "/proc/" + std::to_string(pid) + "/root");
  }
  TempDir dir_;
  HostFs fs_{dir_.path()};
  std::unique_ptr<ProcessControl> processes_ = MakeProcessControl(fs_);
};

TEST_F(HostPidInContainerTest, TheRootTellsContainersWithTheSamePidApart) {
  EXPECT_EQ(processes_->HostPidInContainer(dir_.path() + "/lxc/a/rootfs", 17), 100);
  EXPECT_EQ(processes_->HostPidInContainer(dir_.path() + "/lxc/b/rootfs", 17), 200);
}

TEST_F(HostPidInContainerTest, NothingWhenNoProcessMatches) {
  EXPECT_EQ(processes_->HostPidInContainer(dir_.path() + "/lxc/a/rootfs", 18), std::nullopt);
  EXPECT_EQ(processes_->HostPidInContainer(dir_.path() + "/lxc/missing/rootfs", 17), std::nullopt);
  EXPECT_EQ(processes_->HostPidInContainer(dir_.path() + "/lxc/a/rootfs", 0), std::nullopt);
  EXPECT_EQ(processes_->HostPidInContainer(dir_.path() + "/lxc/a/rootfs", -1), std::nullopt);
}

TEST(HostPidInContainerReal, OurOwnProcessIsNotInAChildNamespace) {
  HostFs fs;
  std::unique_ptr<ProcessControl> processes = MakeProcessControl(fs);
  // Only processes below our pid namespace count: we are in ours.
  EXPECT_EQ(processes->HostPidInContainer("/", ::getpid()), std::nullopt);
}

}  // namespace
}  // namespace gpuctl::sys
