// The contract of agents/sys/cgroup_driver.h as one parameterised suite, run
// on every CgroupDriver: the fake the guard and train tests use, the v1 and
// v2 drivers over fixture trees (tests/unit/sys/cgroup_driver_contract_test.cc)
// and the v1 driver on this host's kernel, as root
// (tests/privileged/cgroup_v1_contract_test.cc). Code tested against the fake
// then meets the same codes and figures from the real drivers.
//
// A world is a driver with what stands around it: the kernel's side of a
// mkdir or rmdir (a fixture tree needs its control files written or cleared
// by hand), a process to put in a cgroup, and figures to report. Include this
// header in one file per test binary and instantiate the suite there:
//   INSTANTIATE_TEST_SUITE_P(Fixture, CgroupDriverContract,
//                            ::testing::Values(CgroupWorldFactory{...}), CgroupWorldName);
// and CgroupDriverFiguresContract too for worlds that can set figures.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "agents/sys/cgroup_driver.h"
#include "tests/fakes/skip_policy.h"

namespace gpuctl::testing {

class CgroupWorld {
 public:
  virtual ~CgroupWorld() = default;
  virtual sys::CgroupDriver& driver() = 0;
  // An existing, empty cgroup the suite works under ("/contract"), and its own.
  virtual std::string base() const = 0;
  // The kernel's part of a successful mkdir: the new cgroup's control files.
  virtual void KernelCreated(const std::string& /*path*/) {}
  // The kernel's reading of a limit just written to `path` (v1 shows -1,
  // "no limit", as PAGE_COUNTER_MAX).
  virtual void KernelWroteLimit(const std::string& /*path*/) {}
  // The kernel's part of an rmdir of `path` and of its children: control
  // files do not keep a cgroup without processes from going.
  virtual void KernelBeforeRemove(const std::string& /*path*/) {}
  // A live process put into `path` behind the driver's back (as a job's
  // fork lands in its parent's cgroup); its pid.
  virtual int64_t StartProcessIn(const std::string& path) = 0;
  // Whether adding a process to a cgroup takes it out of its last one: the
  // kernel's and the fake's do; a fixture file cannot.
  virtual bool MovesProcesses() const = 0;

  struct Figures {
    uint64_t current = 0;
    uint64_t active_file = 0;
    uint64_t inactive_file = 0;
    uint64_t dirty = 0;
    uint64_t writeback = 0;
    uint64_t oom_kills = 0;
  };
  // Makes `path` report these figures. Only worlds whose figures are not
  // the kernel's own can: those that run CgroupDriverFiguresContract too.
  virtual void SetFigures(const std::string& /*path*/, const Figures& /*figures*/) {
    ADD_FAILURE() << "this world reports the kernel's own figures: do not run CgroupDriverFiguresContract on it";
  }
};

// Why a world cannot be had here, and whether that is the platform's doing
// (a v2 host for a v1 world: it may skip under CI) or something CI provides
// (root: a skip there fails, tests/fakes/skip_policy.h).
struct CgroupWorldUnavailable {
  std::string why;
  bool platform = false;
};

struct CgroupWorldFactory {
  std::string name;
  sys::CgroupVersion version;
  // nullptr with *unavailable set: this world is not available here.
  std::function<std::unique_ptr<CgroupWorld>(CgroupWorldUnavailable* unavailable)> make;
};

inline void PrintTo(const CgroupWorldFactory& factory, std::ostream* os) { *os << factory.name; }

inline std::string CgroupWorldName(const ::testing::TestParamInfo<CgroupWorldFactory>& info) {
  return info.param.name;
}

class CgroupDriverContract : public ::testing::TestWithParam<CgroupWorldFactory> {
 protected:
  void SetUp() override {
    CgroupWorldUnavailable unavailable;
    world_ = GetParam().make(&unavailable);
    if (world_) return;
    if (unavailable.platform) {
      GPUCTL_SKIP_ALLOWED(kPlatform) << GetParam().name << ": " << unavailable.why;
    }
    GPUCTL_SKIP() << GetParam().name << ": " << unavailable.why;
  }
  void TearDown() override { world_.reset(); }

  sys::CgroupDriver& driver() { return world_->driver(); }
  bool v1() const { return GetParam().version == sys::CgroupVersion::kV1; }
  std::string At(const std::string& name) const { return world_->base() + "/" + name; }
  Status Create(const std::string& path) {
    Status s = driver().CreateCgroup(path);
    if (s.ok()) world_->KernelCreated(path);
    return s;
  }
  Status SetMemoryMax(const std::string& path, std::optional<uint64_t> bytes) {
    Status s = driver().SetMemoryMax(path, bytes);
    if (s.ok()) world_->KernelWroteLimit(path);
    return s;
  }
  Status Remove(const std::string& path) {
    world_->KernelBeforeRemove(path);
    return driver().RemoveCgroup(path);
  }
  std::vector<int64_t> Procs(const std::string& path) {
    Result<std::vector<int64_t>> procs = driver().Processes(path);
    EXPECT_TRUE(procs.ok()) << path << ": " << procs.status().ToString();
    std::vector<int64_t> sorted = procs.ok() ? *procs : std::vector<int64_t>{};
    std::sort(sorted.begin(), sorted.end());
    return sorted;
  }
  static bool Holds(const std::vector<int64_t>& pids, int64_t pid) {
    return std::find(pids.begin(), pids.end(), pid) != pids.end();
  }

  std::unique_ptr<CgroupWorld> world_;
};

constexpr uint64_t kContractMiB = uint64_t{1} << 20;

TEST_P(CgroupDriverContract, VersionIsTheWorlds) { EXPECT_EQ(driver().version(), GetParam().version); }

TEST_P(CgroupDriverContract, EveryMethodRefusesPathsThatLeaveTheMount) {
  for (const std::string bad : {"", "relative", "/a/../b", "/..", "/a/./b", "/a//b"}) {
    SCOPED_TRACE("path '" + bad + "'");
    const ErrorCode invalid = ErrorCode::kInvalidArgument;
    EXPECT_EQ(driver().Directory(bad).status().code(), invalid);
    EXPECT_EQ(driver().CreateCgroup(bad).code(), invalid);
    EXPECT_EQ(driver().RemoveCgroup(bad).code(), invalid);
    EXPECT_EQ(driver().AddProcess(bad, 1).code(), invalid);
    EXPECT_EQ(driver().SetMemoryMax(bad, kContractMiB).code(), invalid);
    EXPECT_EQ(driver().MemoryCurrent(bad).status().code(), invalid);
    EXPECT_EQ(driver().MemoryLimit(bad).status().code(), invalid);
    EXPECT_EQ(driver().ReclaimableFile(bad).status().code(), invalid);
    EXPECT_EQ(driver().Processes(bad).status().code(), invalid);
    EXPECT_EQ(driver().OomKillCount(bad).status().code(), invalid);
    EXPECT_EQ(driver().KillAll(bad).code(), invalid);
    // v1 has neither file, whatever the path: "always kFailedPrecondition".
    const ErrorCode v1_or_invalid = v1() ? ErrorCode::kFailedPrecondition : invalid;
    EXPECT_EQ(driver().SetMemoryHigh(bad, kContractMiB).code(), v1_or_invalid);
    EXPECT_EQ(driver().MemoryPressure(bad).status().code(), v1_or_invalid);
    EXPECT_EQ(driver().Children(bad).status().code(), invalid);
    EXPECT_EQ(driver().CreateSubgroup(bad).code(), v1_or_invalid);
    EXPECT_EQ(driver().SetFrozen(bad, true).code(), v1_or_invalid);
    EXPECT_EQ(driver().Frozen(bad).status().code(), v1_or_invalid);
  }
}

TEST_P(CgroupDriverContract, DirectoryIsThePathUnderTheMount) {
  Result<std::string> dir = driver().Directory(At("a/b"));
  ASSERT_TRUE(dir.ok()) << dir.status().ToString();
  EXPECT_TRUE(dir->ends_with(At("a/b"))) << *dir;
  EXPECT_NE(*dir, At("a/b")) << "the mount comes first";
}

TEST_P(CgroupDriverContract, ACreatedCgroupIsEmptyAndUnlimited) {
  const std::string a = At("a");
  ASSERT_TRUE(Create(a).ok());
  EXPECT_EQ(Create(a).code(), ErrorCode::kAlreadyExists) << "callers adopt leftovers on this code";
  EXPECT_EQ(Create(At("missing/x")).code(), ErrorCode::kNotFound) << "no parent";
  EXPECT_EQ(Create("/").code(), ErrorCode::kInvalidArgument) << "the root has no parent";

  EXPECT_TRUE(Procs(a).empty());
  Result<std::optional<uint64_t>> limit = driver().MemoryLimit(a);
  ASSERT_TRUE(limit.ok()) << limit.status().ToString();
  EXPECT_EQ(*limit, std::nullopt);
  Result<uint64_t> current = driver().MemoryCurrent(a);
  ASSERT_TRUE(current.ok()) << current.status().ToString();
  EXPECT_EQ(*current, 0u);
  Result<uint64_t> reclaimable = driver().ReclaimableFile(a);
  ASSERT_TRUE(reclaimable.ok()) << reclaimable.status().ToString();
  EXPECT_EQ(*reclaimable, 0u);
  Result<uint64_t> kills = driver().OomKillCount(a);
  ASSERT_TRUE(kills.ok()) << kills.status().ToString();
  EXPECT_EQ(*kills, 0u);
}

TEST_P(CgroupDriverContract, MemoryLimitReadsBackWhatSetMemoryMaxWrote) {
  const std::string a = At("a");
  ASSERT_TRUE(Create(a).ok());
  ASSERT_TRUE(SetMemoryMax(a, 64 * kContractMiB).ok());
  EXPECT_EQ(driver().MemoryLimit(a).value_or(std::nullopt), std::optional<uint64_t>(64 * kContractMiB));
  ASSERT_TRUE(SetMemoryMax(a, std::nullopt).ok());
  Result<std::optional<uint64_t>> none = driver().MemoryLimit(a);
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_EQ(*none, std::nullopt) << "nullopt removes the limit";
}

TEST_P(CgroupDriverContract, MemoryHighAndPressureAreV2Only) {
  const std::string a = At("a");
  ASSERT_TRUE(Create(a).ok());
  if (v1()) {
    EXPECT_EQ(driver().SetMemoryHigh(a, 48 * kContractMiB).code(), ErrorCode::kFailedPrecondition);
    EXPECT_EQ(driver().SetMemoryHigh(At("gone"), 48 * kContractMiB).code(), ErrorCode::kFailedPrecondition)
        << "always, on v1";
    EXPECT_EQ(driver().MemoryPressure(a).status().code(), ErrorCode::kFailedPrecondition);
    EXPECT_EQ(driver().MemoryPressure(At("gone")).status().code(), ErrorCode::kFailedPrecondition)
        << "v1 has no per-cgroup pressure: not 'the cgroup is gone'";
  } else {
    EXPECT_TRUE(driver().SetMemoryHigh(a, 48 * kContractMiB).ok());
    EXPECT_TRUE(driver().SetMemoryHigh(a, std::nullopt).ok());
    EXPECT_EQ(driver().SetMemoryHigh(At("gone"), 1).code(), ErrorCode::kNotFound);
    EXPECT_EQ(driver().MemoryPressure(At("gone")).status().code(), ErrorCode::kNotFound);
  }
}

TEST_P(CgroupDriverContract, AMissingCgroupIsNotFound) {
  const std::string gone = At("gone");
  EXPECT_EQ(driver().RemoveCgroup(gone).code(), ErrorCode::kNotFound);
  EXPECT_EQ(driver().AddProcess(gone, 1).code(), ErrorCode::kNotFound);
  EXPECT_EQ(driver().SetMemoryMax(gone, kContractMiB).code(), ErrorCode::kNotFound);
  EXPECT_EQ(driver().MemoryCurrent(gone).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(driver().MemoryLimit(gone).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(driver().ReclaimableFile(gone).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(driver().Processes(gone).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(driver().OomKillCount(gone).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(driver().KillAll(gone).code(), ErrorCode::kNotFound);
  EXPECT_EQ(driver().Children(gone).status().code(), ErrorCode::kNotFound);
  if (!v1()) {
    EXPECT_EQ(driver().CreateSubgroup(gone + "/x").code(), ErrorCode::kNotFound);
    EXPECT_EQ(driver().SetFrozen(gone, true).code(), ErrorCode::kNotFound);
    EXPECT_EQ(driver().Frozen(gone).status().code(), ErrorCode::kNotFound);
  }
}

TEST_P(CgroupDriverContract, AddProcessMovesAProcessIn) {
  const std::string a = At("a");
  const std::string b = At("b");
  ASSERT_TRUE(Create(a).ok());
  ASSERT_TRUE(Create(b).ok());
  EXPECT_EQ(driver().AddProcess(a, 0).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(driver().AddProcess(a, -5).code(), ErrorCode::kInvalidArgument);

  const int64_t pid = world_->StartProcessIn(a);
  EXPECT_EQ(Procs(a), std::vector<int64_t>{pid});
  ASSERT_TRUE(driver().AddProcess(b, pid).ok());
  EXPECT_TRUE(Holds(Procs(b), pid));
  if (world_->MovesProcesses()) {
    EXPECT_FALSE(Holds(Procs(a), pid)) << "a process is in one cgroup";
  }
}

TEST_P(CgroupDriverContract, RemoveRefusesACgroupInUseAndTakesAnEmptyOne) {
  const std::string a = At("a");
  ASSERT_TRUE(Create(a).ok());
  world_->StartProcessIn(a);
  EXPECT_EQ(Remove(a).code(), ErrorCode::kFailedPrecondition) << "it has a process";

  const std::string b = At("b");
  ASSERT_TRUE(Create(b).ok());
  ASSERT_TRUE(Create(b + "/c").ok());
  ASSERT_TRUE(Create(b + "/d").ok());
  world_->StartProcessIn(b + "/d");
  EXPECT_EQ(Remove(b).code(), ErrorCode::kFailedPrecondition) << "a child has a process";
  EXPECT_TRUE(Procs(b + "/d").size() == 1) << "what is in use stays";

  // Children without processes (a build's pause groups its compiles left)
  // go with their parent.
  const std::string e = At("e");
  ASSERT_TRUE(Create(e).ok());
  ASSERT_TRUE(Create(e + "/f").ok());
  ASSERT_TRUE(Create(e + "/f/g").ok());
  ASSERT_TRUE(Remove(e).ok());
  EXPECT_EQ(Remove(e).code(), ErrorCode::kNotFound);
  EXPECT_EQ(driver().MemoryCurrent(e).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(Create(e + "/f").code(), ErrorCode::kNotFound) << "its children went with it";
}

TEST_P(CgroupDriverContract, ProcessesAndKillAllTakeTheChildCgroupsIn) {
  const std::string a = At("a");
  ASSERT_TRUE(Create(a).ok());
  ASSERT_TRUE(Create(a + "/x").ok());
  ASSERT_TRUE(Create(a + "/x/y").ok());
  ASSERT_TRUE(Create(a + "/z").ok());
  Result<std::vector<std::string>> children = driver().Children(a);
  ASSERT_TRUE(children.ok()) << children.status().ToString();
  EXPECT_EQ(*children, (std::vector<std::string>{a + "/x", a + "/z"})) << "direct children, sorted";

  const int64_t in_y = world_->StartProcessIn(a + "/x/y");
  const int64_t in_z = world_->StartProcessIn(a + "/z");
  std::vector<int64_t> all = {in_y, in_z};
  std::sort(all.begin(), all.end());
  EXPECT_EQ(Procs(a), all) << "a job's processes, those in its pause groups included";
  EXPECT_EQ(Procs(a + "/z"), std::vector<int64_t>{in_z});

  Status killed = driver().KillAll(a);
  ASSERT_TRUE(killed.ok()) << killed.ToString();
  EXPECT_TRUE(Procs(a).empty()) << "the children's processes die too";
  EXPECT_TRUE(Remove(a).ok()) << "and the cgroup goes, children and all";
}

TEST_P(CgroupDriverContract, SubgroupsAndTheFreezerAreV2Only) {
  const std::string a = At("a");
  ASSERT_TRUE(Create(a).ok());
  const std::string paused = a + "/paused";
  if (v1()) {
    EXPECT_EQ(driver().CreateSubgroup(paused).code(), ErrorCode::kFailedPrecondition);
    EXPECT_EQ(driver().SetFrozen(a, true).code(), ErrorCode::kFailedPrecondition);
    EXPECT_EQ(driver().Frozen(a).status().code(), ErrorCode::kFailedPrecondition);
    return;
  }
  // The parent keeps a process of its own: a subgroup enables no
  // controller, so the kernel's no-internal-processes rule does not bite.
  const int64_t parents = world_->StartProcessIn(a);
  Status made = driver().CreateSubgroup(paused);
  ASSERT_TRUE(made.ok()) << made.ToString();
  world_->KernelCreated(paused);
  EXPECT_EQ(driver().CreateSubgroup(paused).code(), ErrorCode::kAlreadyExists);
  const int64_t frozen = world_->StartProcessIn(paused);
  ASSERT_TRUE(driver().SetFrozen(paused, true).ok());
  EXPECT_EQ(driver().Frozen(paused).value_or(false), true);
  EXPECT_EQ(driver().Frozen(a).value_or(true), false) << "the parent is not frozen";
  ASSERT_TRUE(driver().SetFrozen(paused, false).ok());
  EXPECT_EQ(driver().Frozen(paused).value_or(true), false);
  std::vector<int64_t> both = {parents, frozen};
  std::sort(both.begin(), both.end());
  EXPECT_EQ(Procs(a), both);
}

TEST_P(CgroupDriverContract, RemoveNeverTakesTheRoot) {
  EXPECT_EQ(Remove("/").code(), ErrorCode::kFailedPrecondition);
  EXPECT_TRUE(driver().Processes("/").ok()) << "the root is still there";
}

TEST_P(CgroupDriverContract, KillAllReturnsOnceTheCgroupIsEmpty) {
  const std::string a = At("a");
  ASSERT_TRUE(Create(a).ok());
  EXPECT_TRUE(driver().KillAll(a).ok()) << "nothing to kill is no error";
  const int64_t first = world_->StartProcessIn(a);
  const int64_t second = world_->StartProcessIn(a);
  std::vector<int64_t> both = {first, second};
  std::sort(both.begin(), both.end());
  EXPECT_EQ(Procs(a), both);
  Status killed = driver().KillAll(a);
  ASSERT_TRUE(killed.ok()) << killed.ToString();
  EXPECT_TRUE(Procs(a).empty()) << "KillAll's return marks the victims dead";
  EXPECT_TRUE(Remove(a).ok()) << "and the cgroup can go";
}

// The figures, where a world can set them (the fake and fixture trees; a
// real kernel's figures are its own). Instantiate it for those worlds only.
class CgroupDriverFiguresContract : public CgroupDriverContract {};
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CgroupDriverFiguresContract);

TEST_P(CgroupDriverFiguresContract, FiguresAreReadAsTheKernelReportsThem) {
  const std::string a = At("a");
  ASSERT_TRUE(Create(a).ok());
  CgroupWorld::Figures figures;
  figures.current = 700 * kContractMiB;
  figures.active_file = 20 * kContractMiB;
  figures.inactive_file = 80 * kContractMiB;
  figures.dirty = 4 * kContractMiB;
  figures.writeback = 1 * kContractMiB;
  figures.oom_kills = 2;
  world_->SetFigures(a, figures);
  EXPECT_EQ(driver().MemoryCurrent(a).value_or(0), 700 * kContractMiB);
  // Active and inactive file pages less those dirty or under writeback.
  EXPECT_EQ(driver().ReclaimableFile(a).value_or(0), 95 * kContractMiB);
  EXPECT_EQ(driver().OomKillCount(a).value_or(0), 2u);
}

}  // namespace gpuctl::testing
