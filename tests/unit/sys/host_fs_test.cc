#include "agents/sys/host_fs.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "tests/fakes/temp_dir.h"

namespace gpuctl::sys {
namespace {

using gpuctl::testing::TempDir;

// A NUL-separated environment block as in /proc/<pid>/environ.
std::string EnvironBlock(std::initializer_list<std::string_view> entries) {
  std::string block;
  for (std::string_view e : entries) (block += e) += '\0';
  return block;
}

TEST(HostFs, JoinsPathsUnderItsRoot) {
  EXPECT_EQ(HostFs("/").Path("proc/meminfo"), "/proc/meminfo");
  EXPECT_EQ(HostFs("/").Path("/proc/meminfo"), "/proc/meminfo");
  EXPECT_EQ(HostFs("/tmp/x").Path("proc/meminfo"), "/tmp/x/proc/meminfo");
  EXPECT_EQ(HostFs("/tmp/x/").Path("/proc/meminfo"), "/tmp/x/proc/meminfo");
}

TEST(HostFs, ReadFileReturnsBytesOrNotFoundWithThePath) {
  TempDir dir;
  dir.WriteFile("proc/1/environ", EnvironBlock({"A=1", "B=2"}));
  HostFs fs(dir.path());
  EXPECT_EQ(fs.ReadFile("proc/1/environ").value_or(""), std::string("A=1\0B=2\0", 8));
  auto missing = fs.ReadFile("proc/nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(missing.status().message().find(dir.path() + "/proc/nope"), std::string::npos);
}

TEST(HostFs, ReadsMeminfoLoadavgUptimeFromTheTree) {
  TempDir dir;
  dir.WriteFile("proc/meminfo", "MemTotal: 2048 kB\nMemAvailable: 1024 kB\n");
  dir.WriteFile("proc/loadavg", "1.50 1.00 0.50 2/300 4242\n");
  dir.WriteFile("proc/uptime", "100.25 50.00\n");
  HostFs fs(dir.path());
  auto mem = fs.ReadMeminfo();
  ASSERT_TRUE(mem.ok()) << mem.status().ToString();
  EXPECT_EQ(mem->mem_total_bytes(), 2048u * 1024);
  EXPECT_EQ(mem->mem_available_bytes(), 1024u * 1024);
  EXPECT_DOUBLE_EQ(fs.ReadLoadavg().value_or({}).load1, 1.5);
  EXPECT_DOUBLE_EQ(fs.ReadUptime().value_or(0), 100.25);
}

TEST(HostFs, BadMeminfoNamesTheFile) {
  TempDir dir;
  dir.WriteFile("proc/meminfo", "not meminfo\n");
  auto mem = HostFs(dir.path()).ReadMeminfo();
  ASSERT_FALSE(mem.ok());
  EXPECT_EQ(mem.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(mem.status().message().find("proc/meminfo"), std::string::npos);
}

TEST(HostFs, MemoryPressurePresentOrAbsent) {
  TempDir dir;
  HostFs fs(dir.path());
  EXPECT_FALSE(fs.ReadMemoryPressure().has_value()) << "no proc/pressure: kernel without PSI";
  dir.WriteFile("proc/pressure/memory",
                "some avg10=4.00 avg60=2.00 avg300=1.00 total=500\n"
                "full avg10=1.00 avg60=0.50 avg300=0.25 total=100\n");
  auto psi = fs.ReadMemoryPressure();
  ASSERT_TRUE(psi.has_value());
  EXPECT_DOUBLE_EQ(psi->some.avg10, 4.0);
  ASSERT_TRUE(psi->full.has_value());
  EXPECT_EQ(psi->full->total_us, 100u);
  dir.WriteFile("proc/pressure/memory", "garbage\n");
  EXPECT_FALSE(fs.ReadMemoryPressure().has_value());
}

TEST(HostFs, StaticFactsAreTrimmed) {
  TempDir dir;
  dir.WriteFile("proc/sys/kernel/hostname", "gpu-box-1\n");
  dir.WriteFile("proc/sys/kernel/osrelease", "6.8.12-4-pve\n");
  HostFs fs(dir.path());
  EXPECT_EQ(fs.ReadHostname(), "gpu-box-1");
  EXPECT_EQ(fs.ReadKernelRelease(), "6.8.12-4-pve");
  EXPECT_EQ(HostFs(dir.path() + "/nothing").ReadHostname(), "");
}

TEST(HostFs, OsPrettyNameFallsBackToUsrLibThenName) {
  TempDir dir;
  HostFs fs(dir.path());
  EXPECT_EQ(fs.ReadOsPrettyName(), "");
  dir.WriteFile("usr/lib/os-release", "PRETTY_NAME=\"Ubuntu 24.04.1 LTS\"\n");
  EXPECT_EQ(fs.ReadOsPrettyName(), "Ubuntu 24.04.1 LTS");
  dir.WriteFile("etc/os-release", "NAME='Proxmox VE'\nID=pve\n");
  EXPECT_EQ(fs.ReadOsPrettyName(), "Proxmox VE") << "etc/ wins over usr/lib/; NAME stands in";
}

TEST(HostFs, CpuCountFromAffinityThenOnline) {
  TempDir dir;
  HostFs fs(dir.path());
  EXPECT_EQ(fs.ReadCpuCount(), 0u);
  dir.WriteFile("sys/devices/system/cpu/online", "0-15\n");
  EXPECT_EQ(fs.ReadCpuCount(), 16u);
  dir.WriteFile("proc/self/status", "Name:\tgpuctld\nCpus_allowed:\tff\nCpus_allowed_list:\t0-3,8\n");
  EXPECT_EQ(fs.ReadCpuCount(), 5u);
}

TEST(HostFs, ReadsSelfCgroup) {
  TempDir dir;
  dir.WriteFile("proc/self/cgroup", "0::/system.slice/gpuctld.service\n");
  auto entries = HostFs(dir.path()).ReadSelfCgroup();
  ASSERT_TRUE(entries.ok()) << entries.status().ToString();
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ((*entries)[0].path, "/system.slice/gpuctld.service");
}

// --- cgroup version ----------------------------------------------------------

TEST(DetectCgroupVersion, V2) {
  TempDir dir;
  dir.WriteFile("sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n");
  dir.MakeDir("sys/fs/cgroup/memory");  // a v2 child cgroup may be called anything
  EXPECT_EQ(HostFs(dir.path()).DetectCgroupVersion(), CgroupVersion::kV2);
}

TEST(DetectCgroupVersion, V1) {
  TempDir dir;
  dir.MakeDir("sys/fs/cgroup/memory");
  dir.MakeDir("sys/fs/cgroup/cpu");
  dir.MakeDir("sys/fs/cgroup/systemd");
  EXPECT_EQ(HostFs(dir.path()).DetectCgroupVersion(), CgroupVersion::kV1);
}

TEST(DetectCgroupVersion, Hybrid) {
  TempDir dir;
  dir.MakeDir("sys/fs/cgroup/memory");
  dir.WriteFile("sys/fs/cgroup/unified/cgroup.controllers", "");
  EXPECT_EQ(HostFs(dir.path()).DetectCgroupVersion(), CgroupVersion::kHybrid);
}

TEST(DetectCgroupVersion, UnknownWithoutCgroupFs) {
  TempDir dir;
  dir.MakeDir("sys/fs/cgroup");
  EXPECT_EQ(HostFs(dir.path()).DetectCgroupVersion(), CgroupVersion::kUnknown);
  EXPECT_STREQ(CgroupVersionName(CgroupVersion::kHybrid), "hybrid");
  EXPECT_STREQ(CgroupVersionName(CgroupVersion::kV2), "2");
}

// Containers, VMs and bare metal: where_running_test.cc.

// --- the real machine ----------------------------------------------------------

// Reads MemTotal without HostFs or our parser, to check both against the kernel.
uint64_t IndependentMemTotalKb(const std::string& path) {
  std::ifstream in(path);
  std::string key;
  uint64_t kb = 0;
  while (in >> key) {
    if (key == "MemTotal:" && in >> kb) return kb;
    in.ignore(4096, '\n');
  }
  return 0;
}

TEST(HostFsRealRoot, AgreesWithTheKernel) {
  HostFs real("/");
  auto mem = real.ReadMeminfo();
  ASSERT_TRUE(mem.ok()) << mem.status().ToString();
  EXPECT_GT(mem->mem_total_bytes(), 0u);
  EXPECT_EQ(mem->mem_total_bytes(), IndependentMemTotalKb(real.Path("proc/meminfo")) * 1024);
  EXPECT_LE(mem->mem_available_bytes(), mem->mem_total_bytes());

  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  EXPECT_GE(real.ReadCpuCount(), 1u);
  EXPECT_EQ(real.ReadCpuCount(), static_cast<uint32_t>(CPU_COUNT(&set)));

  utsname uts{};
  ASSERT_EQ(uname(&uts), 0);
  EXPECT_EQ(real.ReadKernelRelease(), uts.release);
  EXPECT_EQ(real.ReadHostname(), uts.nodename);
  EXPECT_TRUE(real.ReadLoadavg().ok());
  EXPECT_GT(real.ReadUptime().value_or(0), 0.0);
}

}  // namespace
}  // namespace gpuctl::sys
