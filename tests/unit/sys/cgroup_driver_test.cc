// The v1 and v2 drivers against fixture trees in temp dirs: what they write,
// what they read, and the error codes cgroup_driver.h promises.
#include "agents/sys/cgroup_driver.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "agents/sys/cgroup_io.h"
#include "agents/sys/cgroup_v1_driver.h"
#include "agents/sys/cgroup_v2_driver.h"
#include "agents/sys/process_control.h"
#include "tests/fakes/temp_dir.h"
#include "common/units.h"

namespace gpuctl::sys {
namespace {

using gpuctl::testing::TempDir;
using namespace std::chrono_literals;


std::string Read(const TempDir& dir, const std::string& relative) {
  return ReadControlFile(dir.path() + "/" + relative).value_or("<missing>");
}

// Stands in for kill(2): records signals, and lets a test say what the
// "kernel" does on each (usually: take the pid out of a fixture cgroup.procs).
class RecordingProcessControl final : public ProcessControl {
 public:
  std::vector<std::pair<int64_t, int>> signals;
  std::function<Status(int64_t)> on_signal = [](int64_t) { return Status::Ok(); };

  bool Alive(int64_t) override { return false; }
  bool GroupAlive(int64_t) override { return false; }
  std::optional<uint64_t> StartTime(int64_t) override { return std::nullopt; }
  std::optional<int64_t> ProcessGroup(int64_t) override { return std::nullopt; }
  std::optional<std::string> MemoryCgroup(int64_t) override { return std::nullopt; }
  std::optional<int64_t> HostPidInContainer(const std::string&, int64_t) override { return std::nullopt; }
  Status Signal(int64_t pid, int sig) override {
    signals.emplace_back(pid, sig);
    return on_signal(pid);
  }
  Status SignalGroup(int64_t, int) override { return Internal("not used by the drivers"); }
};

// Removes `pid` from the cgroup.procs file at `file`, as the kernel does
// when a process dies.
void RemovePid(const std::string& file, int64_t pid) {
  std::string text = ReadControlFile(file).value_or("");
  std::string out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    if (!line.empty() && line != std::to_string(pid)) out += line + "\n";
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
  ASSERT_TRUE(WriteControlFile(file, out).ok());
}

// A v2 mount with a delegated /jobs/a cgroup, files as a 6.x kernel shows.
void WriteV2Tree(const TempDir& dir, bool with_kill = true) {
  dir.WriteFile("cgroup.controllers", "cpuset cpu io memory hugetlb pids rdma misc\n");
  dir.WriteFile("cgroup.subtree_control", "cpu memory\n");
  dir.WriteFile("cgroup.procs", "1\n");
  dir.WriteFile("jobs/cgroup.subtree_control", "memory\n");
  dir.WriteFile("jobs/cgroup.procs", "");
  const std::string a = "jobs/a/";
  dir.WriteFile(a + "cgroup.procs", "101\n102\n");
  dir.WriteFile(a + "cgroup.subtree_control", "");
  dir.WriteFile(a + "memory.max", "max\n");
  dir.WriteFile(a + "memory.high", "max\n");
  dir.WriteFile(a + "memory.current", "734003200\n");
  dir.WriteFile(a + "memory.stat",
                "anon 629145600\nfile 104857600\nactive_file 20971520\ninactive_file 83886080\n"
                "file_dirty 4194304\nfile_writeback 1048576\n");
  dir.WriteFile(a + "memory.events", "low 0\nhigh 7\nmax 31\noom 2\noom_kill 2\noom_group_kill 0\n");
  dir.WriteFile(a + "memory.pressure",
                "some avg10=12.50 avg60=3.00 avg300=1.00 total=900000\n"
                "full avg10=8.25 avg60=2.00 avg300=0.50 total=400000\n");
  if (with_kill) dir.WriteFile(a + "cgroup.kill", "");
}

// A v1 memory controller mount with /jobs/a, files as a 6.x kernel shows.
void WriteV1Tree(const TempDir& dir) {
  dir.WriteFile("memory.limit_in_bytes", "9223372036854771712\n");
  dir.WriteFile("cgroup.procs", "1\n");
  const std::string a = "jobs/a/";
  dir.WriteFile("jobs/cgroup.procs", "");
  dir.WriteFile(a + "cgroup.procs", "201\n202\n");
  dir.WriteFile(a + "memory.limit_in_bytes", "9223372036854771712\n");
  dir.WriteFile(a + "memory.usage_in_bytes", "4059136\n");
  dir.WriteFile(a + "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n");
  dir.WriteFile(a + "memory.stat",
                "cache 9265152\nrss 8929280\ninactive_file 4096\nactive_file 180224\n"
                "hierarchical_memory_limit 9223372036854771712\ntotal_cache 9265152\n"
                "total_inactive_file 1052672\ntotal_active_file 180224\n");
  dir.WriteFile(a + "cgroup.event_control", "");
}

// ---- v2 ----

// A job's processes include its pause groups'; a group whose list cannot be
// read fails the whole answer, since "none" would let KillAll call it dead.
TEST(CgroupV2Driver, ProcessesOfAChildThatCannotBeReadAreAnErrorNotNone) {
  TempDir dir;
  WriteV2Tree(dir);
  dir.WriteFile("jobs/a/compile-7-1/cgroup.procs", "103\n");
  RecordingProcessControl pc;
  CgroupV2Driver driver(dir.path(), pc);
  EXPECT_EQ(driver.Processes("/jobs/a").value_or(std::vector<int64_t>{}), (std::vector<int64_t>{101, 102, 103}));
  dir.MakeDir("jobs/a/unreadable/cgroup.procs");  // a directory: read(2) fails with EISDIR
  Result<std::vector<int64_t>> pids = driver.Processes("/jobs/a");
  EXPECT_FALSE(pids.ok()) << "read as " << pids.value_or(std::vector<int64_t>{}).size() << " processes";
}

TEST(CgroupV2Driver, SetMemoryMaxWritesBytesOrMax) {
  TempDir dir;
  WriteV2Tree(dir);
  RecordingProcessControl pc;
  CgroupV2Driver driver(dir.path(), pc);
  ASSERT_TRUE(driver.SetMemoryMax("/jobs/a", 64 * kMiB).ok());
  EXPECT_EQ(Read(dir, "jobs/a/memory.max"), "67108864");
  ASSERT_TRUE(driver.SetMemoryMax("/jobs/a", std::nullopt).ok());
  EXPECT_EQ(Read(dir, "jobs/a/memory.max"), "max");
  ASSERT_TRUE(driver.SetMemoryHigh("/jobs/a", 48 * kMiB).ok());
  EXPECT_EQ(Read(dir, "jobs/a/memory.high"), "50331648");
}

TEST(CgroupV2Driver, ReadsLimitCurrentStatPressure) {
  TempDir dir;
  WriteV2Tree(dir);
  RecordingProcessControl pc;
  CgroupV2Driver driver(dir.path(), pc);
  auto unlimited = driver.MemoryLimit("/jobs/a");
  ASSERT_TRUE(unlimited.ok()) << unlimited.status().ToString();
  EXPECT_FALSE(unlimited->has_value());
  dir.WriteFile("jobs/a/memory.max", "1073741824\n");
  EXPECT_EQ(driver.MemoryLimit("/jobs/a").value_or(std::nullopt), std::optional<uint64_t>(1073741824));
  EXPECT_EQ(driver.MemoryCurrent("/jobs/a").value_or(0), 734003200u);
  // active + inactive - dirty - writeback: 20 + 80 - 4 - 1 MiB
  EXPECT_EQ(driver.ReclaimableFile("/jobs/a").value_or(0), 95u * 1048576);
  auto psi = driver.MemoryPressure("/jobs/a");
  ASSERT_TRUE(psi.ok()) << psi.status().ToString();
  ASSERT_TRUE(psi->full.has_value());
  EXPECT_DOUBLE_EQ(psi->full->avg10, 8.25);
}

TEST(CgroupV2Driver, OomKillCountFromMemoryEvents) {
  TempDir dir;
  WriteV2Tree(dir);
  RecordingProcessControl pc;
  CgroupV2Driver driver(dir.path(), pc);
  EXPECT_EQ(driver.OomKillCount("/jobs/a").value_or(99), 2u);
  dir.WriteFile("jobs/a/memory.events", "low 0\nhigh 0\nmax 0\noom 0\n");
  EXPECT_EQ(driver.OomKillCount("/jobs/a").status().code(), ErrorCode::kFailedPrecondition);
  dir.WriteFile("jobs/a/memory.events", "oom_kill lots\n");
  EXPECT_EQ(driver.OomKillCount("/jobs/a").status().code(), ErrorCode::kInvalidArgument);
}

TEST(CgroupV2Driver, AddProcessWritesThePidAndProcessesReadsThem) {
  TempDir dir;
  WriteV2Tree(dir);
  RecordingProcessControl pc;
  CgroupV2Driver driver(dir.path(), pc);
  EXPECT_EQ(driver.Processes("/jobs/a").value_or({}), (std::vector<int64_t>{101, 102}));
  ASSERT_TRUE(driver.AddProcess("/jobs/a", 4242).ok());
  EXPECT_EQ(Read(dir, "jobs/a/cgroup.procs"), "4242");
  EXPECT_EQ(driver.AddProcess("/jobs/a", 0).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(driver.AddProcess("/jobs/nope", 4242).code(), ErrorCode::kNotFound);
}

TEST(CgroupV2Driver, CreateEnablesMemoryInTheParentOnlyWhenMissing) {
  TempDir dir;
  WriteV2Tree(dir);
  dir.WriteFile("builds/cgroup.subtree_control", "cpu\n");
  RecordingProcessControl pc;
  CgroupV2Driver driver(dir.path(), pc);
  ASSERT_TRUE(driver.CreateCgroup("/builds/b1").ok());
  EXPECT_TRUE(std::filesystem::is_directory(dir.path() + "/builds/b1"));
  EXPECT_EQ(Read(dir, "builds/cgroup.subtree_control"), "+memory");
  ASSERT_TRUE(driver.CreateCgroup("/jobs/b").ok());
  EXPECT_EQ(Read(dir, "jobs/cgroup.subtree_control"), "memory\n") << "already delegated: left alone";
}

TEST(CgroupV2Driver, CreateAndRemoveErrors) {
  TempDir dir;
  WriteV2Tree(dir);
  RecordingProcessControl pc;
  CgroupV2Driver driver(dir.path(), pc);
  EXPECT_EQ(driver.CreateCgroup("/jobs/a").code(), ErrorCode::kAlreadyExists);
  EXPECT_EQ(driver.CreateCgroup("/missing/x").code(), ErrorCode::kNotFound);
  EXPECT_EQ(driver.CreateCgroup("/").code(), ErrorCode::kInvalidArgument);
  ASSERT_TRUE(driver.CreateCgroup("/jobs/c").ok());
  ASSERT_TRUE(driver.RemoveCgroup("/jobs/c").ok());
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/jobs/c"));
  EXPECT_EQ(driver.RemoveCgroup("/jobs/c").code(), ErrorCode::kNotFound);
}

TEST(CgroupV2Driver, RefusesPathsThatLeaveTheMount) {
  TempDir dir;
  WriteV2Tree(dir);
  dir.WriteFile("outside/memory.max", "max\n");
  RecordingProcessControl pc;
  CgroupV2Driver driver(dir.path() + "/jobs", pc);
  for (const char* bad : {"../outside", "/../outside", "/a/../../outside", "relative", ""}) {
    EXPECT_EQ(driver.SetMemoryMax(bad, 1).code(), ErrorCode::kInvalidArgument) << bad;
    EXPECT_EQ(driver.CreateCgroup(bad).code(), ErrorCode::kInvalidArgument) << bad;
    EXPECT_EQ(driver.KillAll(bad).code(), ErrorCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(Read(dir, "outside/memory.max"), "max\n");
}

TEST(CgroupV2Driver, MissingCgroupIsNotFound) {
  TempDir dir;
  WriteV2Tree(dir);
  RecordingProcessControl pc;
  CgroupV2Driver driver(dir.path(), pc);
  EXPECT_EQ(driver.MemoryCurrent("/jobs/gone").status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(driver.MemoryLimit("/jobs/gone").status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(driver.OomKillCount("/jobs/gone").status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(driver.SetMemoryMax("/jobs/gone", 1).code(), ErrorCode::kNotFound);
  EXPECT_EQ(driver.KillAll("/jobs/gone").code(), ErrorCode::kNotFound);
}

TEST(CgroupV2Driver, KillAllWritesOneToCgroupKillAndSendsNoSignals) {
  TempDir dir;
  WriteV2Tree(dir);
  dir.WriteFile("jobs/a/cgroup.procs", "");  // the kernel has done its work
  RecordingProcessControl pc;
  CgroupV2Driver driver(dir.path(), pc);
  ASSERT_TRUE(driver.KillAll("/jobs/a").ok());
  EXPECT_EQ(Read(dir, "jobs/a/cgroup.kill"), "1");
  EXPECT_TRUE(pc.signals.empty());
}

TEST(CgroupV2Driver, KillAllReportsSurvivorsAfterTheTimeout) {
  TempDir dir;
  WriteV2Tree(dir);  // cgroup.procs keeps 101 and 102: stuck in the kernel
  RecordingProcessControl pc;
  CgroupV2Driver driver(dir.path(), pc, CgroupDriverOptions{.kill_timeout = 20ms});
  Status s = driver.KillAll("/jobs/a");
  EXPECT_EQ(s.code(), ErrorCode::kUnavailable);
  EXPECT_NE(s.message().find("101 102"), std::string::npos) << s.message();
}

TEST(CgroupV2Driver, KillAllWithoutCgroupKillSignalsEachPid) {
  TempDir dir;
  WriteV2Tree(dir, /*with_kill=*/false);  // a kernel before 5.14
  RecordingProcessControl pc;
  const std::string procs = dir.path() + "/jobs/a/cgroup.procs";
  pc.on_signal = [&](int64_t pid) {
    RemovePid(procs, pid);
    return Status::Ok();
  };
  CgroupV2Driver driver(dir.path(), pc);
  ASSERT_TRUE(driver.KillAll("/jobs/a").ok());
  EXPECT_EQ(pc.signals, (std::vector<std::pair<int64_t, int>>{{101, SIGKILL}, {102, SIGKILL}}));
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/jobs/a/cgroup.kill"));
}

// ---- v1 ----

TEST(CgroupV1Driver, SetMemoryMaxWritesLimitInBytes) {
  TempDir dir;
  WriteV1Tree(dir);
  RecordingProcessControl pc;
  CgroupV1Driver driver(dir.path(), pc);
  ASSERT_TRUE(driver.SetMemoryMax("/jobs/a", 64 * kMiB).ok());
  EXPECT_EQ(Read(dir, "jobs/a/memory.limit_in_bytes"), "67108864");
  ASSERT_TRUE(driver.SetMemoryMax("/jobs/a", std::nullopt).ok());
  EXPECT_EQ(Read(dir, "jobs/a/memory.limit_in_bytes"), "-1");
}

TEST(CgroupV1Driver, HasNoMemoryHighAndNoPressure) {
  TempDir dir;
  WriteV1Tree(dir);
  RecordingProcessControl pc;
  CgroupV1Driver driver(dir.path(), pc);
  EXPECT_EQ(driver.version(), CgroupVersion::kV1);
  EXPECT_EQ(driver.SetMemoryHigh("/jobs/a", kMiB).code(), ErrorCode::kFailedPrecondition);
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/jobs/a/memory.high"));
  EXPECT_EQ(driver.MemoryPressure("/jobs/a").status().code(), ErrorCode::kFailedPrecondition);
}

TEST(CgroupV1Driver, ReadsUsageLimitAndHierarchicalReclaimableFile) {
  TempDir dir;
  WriteV1Tree(dir);
  RecordingProcessControl pc;
  CgroupV1Driver driver(dir.path(), pc);
  EXPECT_EQ(driver.MemoryCurrent("/jobs/a").value_or(0), 4059136u);
  auto limit = driver.MemoryLimit("/jobs/a");
  ASSERT_TRUE(limit.ok()) << limit.status().ToString();
  EXPECT_FALSE(limit->has_value()) << "PAGE_COUNTER_MAX is no limit";
  dir.WriteFile("jobs/a/memory.limit_in_bytes", "67108864\n");
  EXPECT_EQ(driver.MemoryLimit("/jobs/a").value_or(std::nullopt), std::optional<uint64_t>(64 * kMiB));
  EXPECT_EQ(driver.ReclaimableFile("/jobs/a").value_or(0), 1052672u + 180224u) << "the total_* keys";
}

TEST(CgroupV1Driver, OomKillCountFromOomControl) {
  TempDir dir;
  WriteV1Tree(dir);
  RecordingProcessControl pc;
  CgroupV1Driver driver(dir.path(), pc);
  EXPECT_EQ(driver.OomKillCount("/jobs/a").value_or(99), 3u);
  dir.WriteFile("jobs/a/memory.oom_control", "oom_kill_disable 0\nunder_oom 0\n");  // before 4.13
  auto old = driver.OomKillCount("/jobs/a");
  EXPECT_EQ(old.status().code(), ErrorCode::kFailedPrecondition);
  EXPECT_NE(old.status().message().find("4.13"), std::string::npos);
}

TEST(CgroupV1Driver, CreateAddRemove) {
  TempDir dir;
  WriteV1Tree(dir);
  RecordingProcessControl pc;
  CgroupV1Driver driver(dir.path(), pc);
  ASSERT_TRUE(driver.CreateCgroup("/jobs/b").ok());
  EXPECT_TRUE(std::filesystem::is_directory(dir.path() + "/jobs/b"));
  EXPECT_EQ(driver.CreateCgroup("/jobs/b").code(), ErrorCode::kAlreadyExists);
  EXPECT_EQ(driver.CreateCgroup("/nope/b").code(), ErrorCode::kNotFound);
  ASSERT_TRUE(driver.AddProcess("/jobs/a", 777).ok());
  EXPECT_EQ(Read(dir, "jobs/a/cgroup.procs"), "777");
  ASSERT_TRUE(driver.RemoveCgroup("/jobs/b").ok());
  EXPECT_EQ(driver.RemoveCgroup("/jobs/b").code(), ErrorCode::kNotFound);
}

TEST(CgroupV1Driver, KillAllRepeatsUntilForkedChildrenAreGoneToo) {
  TempDir dir;
  WriteV1Tree(dir);
  const std::string procs = dir.path() + "/jobs/a/cgroup.procs";
  RecordingProcessControl pc;
  // 202 forks 203 just before it dies: the first round cannot see 203.
  pc.on_signal = [&](int64_t pid) {
    RemovePid(procs, pid);
    if (pid == 202) {
      std::string text = ReadControlFile(procs).value_or("");
      EXPECT_TRUE(WriteControlFile(procs, text + "203\n").ok());
    }
    return Status::Ok();
  };
  CgroupV1Driver driver(dir.path(), pc);
  ASSERT_TRUE(driver.KillAll("/jobs/a").ok());
  EXPECT_EQ(pc.signals, (std::vector<std::pair<int64_t, int>>{{201, SIGKILL}, {202, SIGKILL}, {203, SIGKILL}}));
  EXPECT_TRUE(driver.Processes("/jobs/a").value_or({1}).empty());
}

TEST(CgroupV1Driver, KillAllSignalsEveryPidThenReportsTheFirstRefusal) {
  TempDir dir;
  WriteV1Tree(dir);
  RecordingProcessControl pc;
  pc.on_signal = [](int64_t pid) {
    return pid == 201 ? Status(ErrorCode::kPermissionDenied, "not yours") : Status::Ok();
  };
  CgroupV1Driver driver(dir.path(), pc);
  Status s = driver.KillAll("/jobs/a");
  EXPECT_EQ(s.code(), ErrorCode::kPermissionDenied);
  EXPECT_EQ(pc.signals.size(), 2u) << "202 is still killed";
}

// ---- factory ----

void WriteV1Mounts(const TempDir& dir) {
  dir.WriteFile("sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
  dir.MakeDir("sys/fs/cgroup/cpu");
}

TEST(CgroupDriverFactory, PicksV2OnAUnifiedHost) {
  TempDir dir;
  dir.WriteFile("sys/fs/cgroup/cgroup.controllers", "cpu io memory pids\n");
  RecordingProcessControl pc;
  auto driver = MakeCgroupDriver(HostFs(dir.path()), pc);
  ASSERT_TRUE(driver.ok()) << driver.status().ToString();
  EXPECT_EQ((*driver)->version(), CgroupVersion::kV2);
  EXPECT_EQ((*driver)->Directory("/a").value_or(""), dir.path() + "/sys/fs/cgroup/a");
}

TEST(CgroupDriverFactory, PicksV1MemoryOnAV1Host) {
  TempDir dir;
  WriteV1Mounts(dir);
  RecordingProcessControl pc;
  auto driver = MakeCgroupDriver(HostFs(dir.path()), pc);
  ASSERT_TRUE(driver.ok()) << driver.status().ToString();
  EXPECT_EQ((*driver)->version(), CgroupVersion::kV1);
  EXPECT_EQ((*driver)->Directory("/a").value_or(""), dir.path() + "/sys/fs/cgroup/memory/a");
}

TEST(CgroupDriverFactory, HybridUsesV1UnlessUnifiedHasMemory) {
  TempDir dir;
  WriteV1Mounts(dir);
  dir.WriteFile("sys/fs/cgroup/unified/cgroup.controllers", "hugetlb\n");  // as on these machines
  RecordingProcessControl pc;
  auto v1 = MakeCgroupDriver(HostFs(dir.path()), pc);
  ASSERT_TRUE(v1.ok()) << v1.status().ToString();
  EXPECT_EQ((*v1)->version(), CgroupVersion::kV1);

  dir.WriteFile("sys/fs/cgroup/unified/cgroup.controllers", "memory pids\n");
  auto v2 = MakeCgroupDriver(HostFs(dir.path()), pc);
  ASSERT_TRUE(v2.ok()) << v2.status().ToString();
  EXPECT_EQ((*v2)->version(), CgroupVersion::kV2);
  EXPECT_EQ((*v2)->Directory("/").value_or(""), dir.path() + "/sys/fs/cgroup/unified");
}

TEST(CgroupDriverFactory, RefusesAHostWithoutAMemoryController) {
  TempDir dir;
  RecordingProcessControl pc;
  auto none = MakeCgroupDriver(HostFs(dir.path()), pc);
  EXPECT_EQ(none.status().code(), ErrorCode::kFailedPrecondition);
  dir.MakeDir("sys/fs/cgroup/memory");  // a mount point with nothing mounted
  auto empty = MakeCgroupDriver(HostFs(dir.path()), pc);
  EXPECT_EQ(empty.status().code(), ErrorCode::kFailedPrecondition);
  EXPECT_NE(empty.status().message().find("sys/fs/cgroup/memory"), std::string::npos);
}

}  // namespace
}  // namespace gpuctl::sys
