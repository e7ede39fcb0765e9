// Registration against a fixture cgroup: the line written to
// cgroup.event_control names the eventfd and the open memory.usage_in_bytes.
// That the kernel fires it is tested for real in tests/privileged.
#include "agents/sys/cgroup_v1_threshold.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <unistd.h>

#include <sstream>

#include "agents/sys/cgroup_io.h"
#include "tests/fakes/temp_dir.h"

namespace gpuctl::sys {
namespace {

using gpuctl::testing::TempDir;
using namespace std::chrono_literals;

// The target of /proc/self/fd/N, to check which file an fd is.
std::string FdTarget(int fd) {
  char buf[4096];
  ssize_t n = ::readlink(("/proc/self/fd/" + std::to_string(fd)).c_str(), buf, sizeof buf - 1);
  return n < 0 ? "" : std::string(buf, static_cast<size_t>(n));
}

// A v1 memory cgroup's two files, as a fixture directory.
void WriteFixtureCgroup(const TempDir& dir) {
  dir.WriteFile("memory.usage_in_bytes", "4096\n");
  dir.WriteFile("cgroup.event_control", "");
}

// The last line written to the fixture's cgroup.event_control: which files
// its fds are, and the threshold.
struct Registration {
  std::string event_file, usage_file;
  uint64_t bytes = 0;
  bool operator==(const Registration&) const = default;
};
Registration LastRegistration(const TempDir& dir) {
  std::istringstream line(ReadControlFile(dir.path() + "/cgroup.event_control").value_or(""));
  int event_fd = -1, usage_fd = -1;
  uint64_t bytes = 0;
  line >> event_fd >> usage_fd >> bytes;
  return {FdTarget(event_fd), FdTarget(usage_fd), bytes};
}

TEST(CgroupV1Threshold, WritesEventfdUsageFdAndThreshold) {
  TempDir dir;
  WriteFixtureCgroup(dir);
  auto threshold = CgroupV1Threshold::Register(dir.path(), 48u << 20);
  ASSERT_TRUE(threshold.ok()) << threshold.status().ToString();
  EXPECT_EQ((*threshold)->armed_lines(), (std::vector<uint64_t>{48u << 20}));
  EXPECT_EQ(LastRegistration(dir),
            (Registration{"anon_inode:[eventfd]", dir.path() + "/memory.usage_in_bytes", 48u << 20}));
  EXPECT_EQ(FormatThresholdRegistration(5, 6, 1024), "5 6 1024");
}

// The guard moves its lines as the cache moves: each line is registered with
// an eventfd of its own, the old ones are closed (which unregisters them), and
// lines already armed are not written again.
TEST(CgroupV1Threshold, ArmAtRegistersEachNewLineAndKeepsLinesAlreadyArmed) {
  TempDir dir;
  WriteFixtureCgroup(dir);
  auto threshold = CgroupV1Threshold::Register(dir.path(), 48u << 20);
  ASSERT_TRUE(threshold.ok()) << threshold.status().ToString();
  ASSERT_TRUE((*threshold)->ArmAt({0, 40u << 20, 60u << 20}).ok());
  EXPECT_EQ((*threshold)->armed_lines(), (std::vector<uint64_t>{40u << 20, 60u << 20})) << "0 is no line";
  EXPECT_EQ(LastRegistration(dir),
            (Registration{"anon_inode:[eventfd]", dir.path() + "/memory.usage_in_bytes", 60u << 20}));

  dir.WriteFile("cgroup.event_control", "untouched");
  ASSERT_TRUE((*threshold)->ArmAt({40u << 20, 60u << 20}).ok());
  EXPECT_EQ(ReadControlFile(dir.path() + "/cgroup.event_control").value_or(""), "untouched");

  ::unlink((dir.path() + "/cgroup.event_control").c_str());  // the cgroup went: the old lines stay armed
  EXPECT_FALSE((*threshold)->ArmAt({50u << 20}).ok());
  EXPECT_EQ((*threshold)->armed_lines(), (std::vector<uint64_t>{40u << 20, 60u << 20}));
}

TEST(CgroupV1Threshold, WaitTimesOutWithoutACrossing) {
  TempDir dir;
  WriteFixtureCgroup(dir);
  auto threshold = CgroupV1Threshold::Register(dir.path(), 1u << 20);
  ASSERT_TRUE(threshold.ok()) << threshold.status().ToString();
  auto outcome = (*threshold)->Wait(10ms);
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  EXPECT_EQ(*outcome, WaitOutcome::kTimedOut);
  EXPECT_EQ((*threshold)->Wait(-5ms).value_or(WaitOutcome::kWoke), WaitOutcome::kTimedOut)
      << "a negative timeout polls instead of waiting for ever";
}

TEST(CgroupV1Threshold, RefusesZeroAndMissingCgroups) {
  TempDir dir;
  WriteFixtureCgroup(dir);
  EXPECT_EQ(CgroupV1Threshold::Register(dir.path(), 0).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(CgroupV1Threshold::Register(dir.path() + "/gone", 1024).status().code(), ErrorCode::kNotFound);
  TempDir no_events;  // a kernel without CONFIG_MEMCG_V1 events
  no_events.WriteFile("memory.usage_in_bytes", "4096\n");
  EXPECT_EQ(CgroupV1Threshold::Register(no_events.path(), 1024).status().code(), ErrorCode::kNotFound);
}

}  // namespace
}  // namespace gpuctl::sys
