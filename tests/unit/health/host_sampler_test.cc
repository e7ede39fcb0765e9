#include "agents/health/host_sampler.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "tests/fakes/temp_dir.h"

namespace gpuctl::health {
namespace {

using gpuctl::testing::TempDir;

void WriteHost(const TempDir& dir) {
  dir.WriteFile("proc/meminfo",
                "MemTotal: 4000 kB\nMemFree: 1000 kB\nMemAvailable: 3000 kB\n"
                "SwapTotal: 2000 kB\nSwapFree: 1500 kB\n");
  dir.WriteFile("proc/loadavg", "2.00 1.50 1.00 3/400 999\n");
  dir.WriteFile("proc/uptime", "3600.50 100.00\n");
  dir.WriteFile("proc/pressure/memory",
                "some avg10=5.00 avg60=1.00 avg300=0.50 total=7\n"
                "full avg10=2.00 avg60=0.40 avg300=0.10 total=3\n");
  dir.WriteFile("proc/sys/kernel/hostname", "h200-node\n");
  dir.WriteFile("proc/sys/kernel/osrelease", "6.8.0-49-generic\n");
  dir.WriteFile("etc/os-release", "PRETTY_NAME=\"Ubuntu 24.04.1 LTS\"\n");
  dir.WriteFile("proc/self/status", "Cpus_allowed_list:\t0-15\n");
  dir.WriteFile("sys/fs/cgroup/cgroup.controllers", "memory pids\n");
  dir.WriteFile("proc/1/environ", std::string("container=lxc\0", 14));
}

TEST(HostSampler, SamplesEveryField) {
  TempDir dir;
  WriteHost(dir);
  sys::HostFs fs(dir.path());
  HostSampler sampler(fs);
  auto h = sampler.Sample();
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_EQ(h->hostname, "h200-node");
  EXPECT_EQ(h->kernel, "6.8.0-49-generic");
  EXPECT_EQ(h->os_release, "Ubuntu 24.04.1 LTS");
  EXPECT_EQ(h->cpus, 16u);
  EXPECT_EQ(h->cgroup_version, sys::CgroupVersion::kV2);
  EXPECT_EQ(h->where.kind, sys::WhereKind::kLxc);
  EXPECT_EQ(h->mem_total_bytes, 4000u * 1024);
  EXPECT_EQ(h->mem_available_bytes, 3000u * 1024);
  EXPECT_EQ(h->swap_total_bytes, 2000u * 1024);
  EXPECT_EQ(h->swap_free_bytes, 1500u * 1024);
  EXPECT_DOUBLE_EQ(h->load.load1, 2.0);
  EXPECT_DOUBLE_EQ(h->load.load15, 1.0);
  EXPECT_DOUBLE_EQ(h->uptime_seconds, 3600.5);
  ASSERT_TRUE(h->memory_pressure.has_value());
  EXPECT_DOUBLE_EQ(h->memory_pressure->some.avg10, 5.0);
  ASSERT_TRUE(h->memory_pressure->full.has_value());
  EXPECT_EQ(h->memory_pressure->full->total_us, 3u);
}

TEST(HostSampler, StaticFactsAreReadOnceAndMemoryEveryTime) {
  TempDir dir;
  WriteHost(dir);
  sys::HostFs fs(dir.path());
  HostSampler sampler(fs);
  dir.WriteFile("proc/sys/kernel/hostname", "renamed\n");
  dir.WriteFile("proc/meminfo", "MemTotal: 4000 kB\nMemAvailable: 10 kB\n");
  auto h = sampler.Sample();
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->hostname, "h200-node");
  EXPECT_EQ(h->mem_available_bytes, 10u * 1024);
}

TEST(HostSampler, FailsOnlyWhenMeminfoIsUnreadable) {
  TempDir dir;
  sys::HostFs fs(dir.path());
  HostSampler sampler(fs);
  auto h = sampler.Sample();
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(h.status().message().find("proc/meminfo"), std::string::npos);
}

TEST(HostSampler, LeavesOptionalFieldsAtDefaults) {
  TempDir dir;
  dir.WriteFile("proc/meminfo", "MemTotal: 4000 kB\nMemFree: 100 kB\nBuffers: 10 kB\nCached: 200 kB\n");
  sys::HostFs fs(dir.path());
  HostSampler sampler(fs);
  auto h = sampler.Sample();
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_EQ(h->mem_available_bytes, 310u * 1024) << "pre-3.14 estimate";
  EXPECT_DOUBLE_EQ(h->load.load1, 0.0);
  EXPECT_DOUBLE_EQ(h->uptime_seconds, 0.0);
  EXPECT_FALSE(h->memory_pressure.has_value());
  EXPECT_EQ(h->hostname, "");
  EXPECT_EQ(h->cpus, 0u);
  EXPECT_EQ(h->cgroup_version, sys::CgroupVersion::kUnknown);
  EXPECT_EQ(h->where.kind, sys::WhereKind::kBareMetal);
}

TEST(HostSampler, LogsAMissingFieldOnlyOnce) {
  auto sink = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(64);
  auto logger = std::make_shared<spdlog::logger>("host-sampler-test", sink);
  logger->set_level(spdlog::level::debug);
  auto previous = spdlog::default_logger();
  spdlog::set_default_logger(logger);

  TempDir dir;
  dir.WriteFile("proc/meminfo", "MemTotal: 4000 kB\n");
  sys::HostFs fs(dir.path());
  HostSampler sampler(fs);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(sampler.Sample().ok());
  spdlog::set_default_logger(previous);

  std::vector<std::string> lines = sink->last_formatted();
  auto count = [&](std::string_view what) {
    return std::count_if(lines.begin(), lines.end(),
                         [&](const std::string& l) { return l.find(what) != std::string::npos; });
  };
  EXPECT_EQ(count("load average"), 1);
  EXPECT_EQ(count("uptime"), 1);
  EXPECT_EQ(count("memory pressure"), 1);
}

}  // namespace
}  // namespace gpuctl::health
