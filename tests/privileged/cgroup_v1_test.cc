// The cgroup v1 memory controller for real: a child cgroup under this test's
// own memory cgroup, a forked child that allocates on command, a usage
// threshold that fires, a kernel OOM kill that is counted, KillAll, removal.
// Needs root and a writable v1 memory hierarchy; skips with the reason
// otherwise (v2 hosts, containers without delegation, non-root runs).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>

#include "agents/sys/cgroup_driver.h"
#include "agents/sys/cgroup_v1_threshold.h"
#include "agents/sys/host_fs.h"
#include "agents/sys/proc_parsers.h"
#include "agents/sys/process_control.h"
#include "agents/sys/psi_trigger.h"
#include "tests/fakes/skip_policy.h"
#include "common/units.h"

namespace gpuctl::sys {
namespace {

using namespace std::chrono_literals;

// A forked child that waits for orders on a pipe: N > 0 allocates and touches
// N MiB more, 0 forks `extra` grandchildren that sleep. It acknowledges each
// order with one byte. Only async-signal-safe calls run after fork.
class Allocator {
 public:
  Allocator() {
    if (::pipe(orders_) != 0 || ::pipe(acks_) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) Serve();
    ::close(orders_[0]);
    ::close(acks_[1]);
  }
  ~Allocator() {
    ::close(orders_[1]);
    ::close(acks_[0]);
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  Allocator(const Allocator&) = delete;
  Allocator& operator=(const Allocator&) = delete;

  pid_t pid() const { return pid_; }
  // Sends an order; true when it was acknowledged (false: the child died).
  bool Order(uint32_t mib) {
    if (::write(orders_[1], &mib, sizeof mib) != sizeof mib) return false;
    char ack = 0;
    return ::read(acks_[0], &ack, 1) == 1;
  }
  void SendOnly(uint32_t mib) { ASSERT_EQ(::write(orders_[1], &mib, sizeof mib), static_cast<ssize_t>(sizeof mib)); }
  // The wait status once it is gone.
  int Reap() {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    reaped_ = true;
    return status;
  }

 private:
  [[noreturn]] void Serve() {
    ::close(orders_[1]);
    ::close(acks_[0]);
    uint32_t mib = 0;
    while (::read(orders_[0], &mib, sizeof mib) == sizeof mib) {
      if (mib == 0) {
        for (int i = 0; i < 3; ++i) {
          if (::fork() == 0) {
            while (true) ::pause();
          }
        }
      } else {
        size_t bytes = size_t{mib} << 20;
        void* block = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (block == MAP_FAILED) ::_exit(3);
        std::memset(block, 0x5a, bytes);
      }
      char ack = 1;
      if (::write(acks_[1], &ack, 1) != 1) ::_exit(4);
    }
    ::_exit(0);
  }

  int orders_[2] = {-1, -1};
  int acks_[2] = {-1, -1};
  pid_t pid_ = -1;
  bool reaped_ = false;
};

class CgroupV1Privileged : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GPUCTL_SKIP() << "needs root to create memory cgroups";
    processes_ = MakeProcessControl(fs_);
    auto driver = MakeCgroupDriver(fs_, *processes_);
    if (!driver.ok()) GPUCTL_SKIP_ALLOWED(kPlatform) << "no memory controller: " << driver.status().ToString();
    driver_ = std::move(*driver);
    if (driver_->version() != CgroupVersion::kV1) GPUCTL_SKIP_ALLOWED(kPlatform) << "this host's memory controller is cgroup v2";
    auto self = fs_.ReadSelfCgroup();
    ASSERT_TRUE(self.ok()) << self.status().ToString();
    auto memory = std::find_if(self->begin(), self->end(), [](const CgroupEntry& e) {
      return std::find(e.controllers.begin(), e.controllers.end(), "memory") != e.controllers.end();
    });
    if (memory == self->end()) GPUCTL_SKIP_ALLOWED(kPlatform) << "/proc/self/cgroup has no memory line";
    auto parent_dir = driver_->Directory(memory->path);
    ASSERT_TRUE(parent_dir.ok()) << parent_dir.status().ToString();
    if (::access(parent_dir->c_str(), W_OK) != 0) GPUCTL_SKIP() << *parent_dir << " is not writable";
    std::string parent = memory->path == "/" ? "" : memory->path;
    path_ = parent + "/gpuctl-test-" + std::to_string(::getpid());
    dir_ = driver_->Directory(path_).value_or("");
    Status created = driver_->CreateCgroup(path_);
    ASSERT_TRUE(created.ok()) << created.ToString();
  }

  void TearDown() override {
    if (driver_ == nullptr || path_.empty() || !std::filesystem::exists(dir_)) return;
    EXPECT_TRUE(driver_->KillAll(path_).ok());
    Status removed = driver_->RemoveCgroup(path_);
    EXPECT_TRUE(removed.ok()) << removed.ToString();
  }

  uint64_t SwapTotal() const { return fs_.ReadMeminfo().value_or({}).swap_total_bytes(); }

  HostFs fs_{"/"};
  std::unique_ptr<ProcessControl> processes_;
  std::unique_ptr<CgroupDriver> driver_;
  std::string path_;
  std::string dir_;
};

TEST_F(CgroupV1Privileged, LimitUsageThresholdKillRemove) {
  ASSERT_TRUE(driver_->SetMemoryMax(path_, 64 * kMiB).ok());
  EXPECT_EQ(driver_->MemoryLimit(path_).value_or(std::nullopt), std::optional<uint64_t>(64 * kMiB));
  EXPECT_EQ(driver_->SetMemoryHigh(path_, 32 * kMiB).code(), ErrorCode::kFailedPrecondition);

  Allocator child;
  ASSERT_GT(child.pid(), 0);
  ASSERT_TRUE(driver_->AddProcess(path_, child.pid()).ok());
  EXPECT_EQ(driver_->Processes(path_).value_or({}), (std::vector<int64_t>{child.pid()}));
  ASSERT_TRUE(child.Order(4));
  auto before = driver_->MemoryCurrent(path_);
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  EXPECT_GE(*before, 4 * kMiB);

  const uint64_t line = *before + 16 * kMiB;
  auto threshold = CgroupV1Threshold::Register(dir_, line);
  ASSERT_TRUE(threshold.ok()) << threshold.status().ToString();
  EXPECT_EQ((*threshold)->Wait(0ms).value_or(WaitOutcome::kWoke), WaitOutcome::kTimedOut);

  ASSERT_TRUE(child.Order(32));  // past the line, under the limit
  auto woke = (*threshold)->Wait(5s);
  ASSERT_TRUE(woke.ok()) << woke.status().ToString();
  EXPECT_EQ(*woke, WaitOutcome::kWoke);
  EXPECT_GE(driver_->MemoryCurrent(path_).value_or(0), line);
  EXPECT_EQ(driver_->OomKillCount(path_).value_or(99), 0u);

  auto started = std::chrono::steady_clock::now();
  Status killed = driver_->KillAll(path_);
  auto took = std::chrono::steady_clock::now() - started;
  ASSERT_TRUE(killed.ok()) << killed.ToString();
  EXPECT_LT(took, 1s);
  int status = child.Reap();
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
  EXPECT_TRUE(driver_->Processes(path_).value_or({1}).empty());

  ASSERT_TRUE(driver_->RemoveCgroup(path_).ok());
  EXPECT_FALSE(std::filesystem::exists(dir_));
  EXPECT_EQ(driver_->MemoryCurrent(path_).status().code(), ErrorCode::kNotFound);
}

// The guard moves its line as the cache moves: a line re-armed lower wakes
// at the new line, the old one no longer counts.
TEST_F(CgroupV1Privileged, AThresholdMovedLowerWakesAtTheNewLine) {
  Allocator child;
  ASSERT_GT(child.pid(), 0);
  ASSERT_TRUE(driver_->AddProcess(path_, child.pid()).ok());
  ASSERT_TRUE(child.Order(4));
  const uint64_t before = driver_->MemoryCurrent(path_).value_or(0);
  ASSERT_GE(before, 4 * kMiB);
  auto threshold = CgroupV1Threshold::Register(dir_, before + 512 * kMiB);
  ASSERT_TRUE(threshold.ok()) << threshold.status().ToString();
  ASSERT_TRUE((*threshold)->ArmAt({before + 16 * kMiB}).ok());
  EXPECT_EQ((*threshold)->Wait(0ms).value_or(WaitOutcome::kWoke), WaitOutcome::kTimedOut);
  ASSERT_TRUE(child.Order(32));  // past the new line, far below the old one
  auto woke = (*threshold)->Wait(5s);
  ASSERT_TRUE(woke.ok()) << woke.status().ToString();
  EXPECT_EQ(*woke, WaitOutcome::kWoke);
  ASSERT_TRUE(driver_->KillAll(path_).ok());
  child.Reap();
}

TEST_F(CgroupV1Privileged, KillAllTakesForkedChildrenToo) {
  Allocator child;
  ASSERT_GT(child.pid(), 0);
  ASSERT_TRUE(driver_->AddProcess(path_, child.pid()).ok());
  ASSERT_TRUE(child.Order(0));  // three sleeping grandchildren, born in the cgroup
  EXPECT_EQ(driver_->Processes(path_).value_or({}).size(), 4u);
  Status killed = driver_->KillAll(path_);
  ASSERT_TRUE(killed.ok()) << killed.ToString();
  EXPECT_TRUE(driver_->Processes(path_).value_or({1}).empty());
  int status = child.Reap();
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

TEST_F(CgroupV1Privileged, KernelOomKillIsCounted) {
  if (SwapTotal() > 0) GPUCTL_SKIP_ALLOWED(kPlatform) << "swap is on: the child would swap instead of being OOM-killed";
  ASSERT_TRUE(driver_->SetMemoryMax(path_, 32 * kMiB).ok());
  Allocator child;
  ASSERT_GT(child.pid(), 0);
  ASSERT_TRUE(driver_->AddProcess(path_, child.pid()).ok());
  child.SendOnly(64);  // twice the limit: the kernel's OOM killer takes it
  int status = child.Reap();
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
  EXPECT_EQ(driver_->OomKillCount(path_).value_or(0), 1u);
}

// CAP_SYS_RESOURCE (bit 24 of CapEff): without it the kernel takes only PSI
// windows that are multiples of 2 s.
bool HasSysResource(const HostFs& fs) {
  auto status = fs.ReadFile("proc/self/status");
  auto cap = status.ok() ? FindStatusField(*status, "CapEff") : std::nullopt;
  return cap && (std::stoull(*cap, nullptr, 16) >> 24 & 1) != 0;
}

TEST(PsiTriggerPrivileged, HostMemoryTriggerRegistersAndWaits) {
  HostFs fs("/");
  if (::geteuid() != 0) GPUCTL_SKIP() << "needs root";
  if (!fs.ReadMemoryPressure()) GPUCTL_SKIP_ALLOWED(kPlatform) << "this kernel has no PSI (or psi=0)";
  const std::string file = fs.Path("proc/pressure/memory");
  auto one_second = PsiTrigger::Open(file, PsiTriggerSpec{.full = true, .stall = 100ms, .window = 1s});
  if (HasSysResource(fs)) {
    EXPECT_TRUE(one_second.ok()) << one_second.status().ToString();
  } else {
    ASSERT_EQ(one_second.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(one_second.status().message().find("multiples of 2 s"), std::string::npos)
        << one_second.status().message();
  }
  auto trigger = PsiTrigger::Open(file, PsiTriggerSpec{.full = true, .stall = 200ms, .window = 2s});
  ASSERT_TRUE(trigger.ok()) << trigger.status().ToString();
  auto outcome = (*trigger)->Wait(50ms);
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();  // either outcome: the host may be busy
}

}  // namespace
}  // namespace gpuctl::sys
