// cgroup v2's freezer for real, as the build governor pauses a compile: the
// build's cgroup keeps a process of its own running while a pause group
// below it (CgroupDriver::CreateSubgroup) is frozen with a compile's two
// processes in it. They stop at once, a SIGCONT does not wake them, and they
// run on when thawed; the build's cgroup lists them all, KillAll kills them
// frozen, and RemoveCgroup takes the emptied group with the build's cgroup.
//
// Memory here is cgroup v1, but a v2 hierarchy is mounted beside it
// (/sys/fs/cgroup/unified): the freezer is the kernel's same code on a v2
// host. Needs root and a cgroup2 mount with cgroup.freeze (Linux 5.2+);
// skips with the reason elsewhere.
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <new>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "agents/sys/cgroup_v2_driver.h"
#include "agents/sys/host_fs.h"
#include "agents/sys/process_control.h"
#include "tests/fakes/skip_policy.h"

namespace gpuctl::sys {
namespace {

using namespace std::chrono_literals;

std::string FileText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Where cgroup2 is mounted: the whole of it on a v2 host, the unified
// hierarchy beside v1's controllers on a hybrid one. Empty: none.
std::string Cgroup2Mount() {
  for (const std::string mount : {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"}) {
    if (std::filesystem::exists(mount + "/cgroup.controllers")) return mount;
  }
  return "";
}

// Two processes that count while they run, as a compile's nvcc and cicc: a
// forked child and its own child, each adding to a shared counter.
class CountingPair {
 public:
  CountingPair() {
    void* shared = ::mmap(nullptr, sizeof(Counters), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED) return;
    counters_ = new (shared) Counters{};
    parent_ = ::fork();
    if (parent_ == 0) {
      pid_t child = ::fork();
      if (child == 0) Count(counters_->child);
      counters_->child_pid = child;
      Count(counters_->parent);
    }
    for (int i = 0; i < 500 && counters_->child_pid.load() == 0; ++i) std::this_thread::sleep_for(2ms);
    child_ = counters_->child_pid.load();
  }
  ~CountingPair() {
    for (pid_t pid : {child_, parent_}) {
      if (pid > 0) ::kill(pid, SIGKILL);
    }
    if (parent_ > 0) ::waitpid(parent_, nullptr, 0);
    if (counters_ != nullptr) ::munmap(counters_, sizeof(Counters));
  }
  CountingPair(const CountingPair&) = delete;
  CountingPair& operator=(const CountingPair&) = delete;

  pid_t parent() const { return parent_; }
  pid_t child() const { return child_; }
  // Both counters, summed.
  uint64_t Count() const { return counters_->parent.load() + counters_->child.load(); }
  // Whether both counted during `span`.
  bool BothCount(std::chrono::milliseconds span) const {
    const uint64_t parent = counters_->parent.load(), child = counters_->child.load();
    std::this_thread::sleep_for(span);
    return counters_->parent.load() > parent && counters_->child.load() > child;
  }

 private:
  struct Counters {
    std::atomic<uint64_t> parent{0};
    std::atomic<uint64_t> child{0};
    std::atomic<pid_t> child_pid{0};
  };
  [[noreturn]] static void Count(std::atomic<uint64_t>& counter) {
    while (true) {
      counter.fetch_add(1);
      ::usleep(1000);
    }
  }

  Counters* counters_ = nullptr;
  pid_t parent_ = -1;
  pid_t child_ = -1;
};

class CgroupV2Freezer : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GPUCTL_SKIP() << "needs root to create cgroups";
    mount_ = Cgroup2Mount();
    if (mount_.empty()) GPUCTL_SKIP_ALLOWED(kPlatform) << "no cgroup2 hierarchy mounted (a v1-only host)";
    build_ = "/gpuctl-freezer-test-" + std::to_string(::getpid());
    build_dir_ = mount_ + build_;
    if (::mkdir(build_dir_.c_str(), 0755) != 0) {
      GPUCTL_SKIP_ALLOWED(kPlatform) << "cannot create " << build_dir_ << ": " << std::strerror(errno);
    }
    made_ = true;
    if (!std::filesystem::exists(build_dir_ + "/cgroup.freeze")) {
      GPUCTL_SKIP_ALLOWED(kPlatform) << "this kernel has no cgroup v2 freezer (Linux 5.2+)";
    }
    processes_ = MakeProcessControl(fs_);
    driver_ = std::make_unique<CgroupV2Driver>(mount_, *processes_);
  }
  void TearDown() override {
    if (!made_ || !std::filesystem::exists(build_dir_)) return;
    // Whatever a failed test left: thawed, killed, removed.
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(build_dir_, ec)) {
      if (entry.is_directory()) std::ofstream(entry.path() / "cgroup.freeze") << "0";
    }
    if (driver_) (void)driver_->KillAll(build_);
    if (driver_) (void)driver_->RemoveCgroup(build_);
    ::rmdir(build_dir_.c_str());
  }

  // The kernel's word that every process of `group` has stopped.
  bool KernelSaysFrozen(const std::string& group) {
    for (int i = 0; i < 250; ++i) {
      if (FileText(mount_ + group + "/cgroup.events").find("frozen 1") != std::string::npos) return true;
      std::this_thread::sleep_for(20ms);
    }
    return false;
  }
  std::vector<int64_t> Sorted(std::vector<int64_t> pids) {
    std::sort(pids.begin(), pids.end());
    return pids;
  }

  HostFs fs_{"/"};
  std::unique_ptr<ProcessControl> processes_;
  std::unique_ptr<CgroupV2Driver> driver_;
  std::string mount_, build_, build_dir_;
  bool made_ = false;
};

TEST_F(CgroupV2Freezer, APauseGroupFreezesACompileWhileTheRestOfTheBuildRuns) {
  // The build's own process (ninja, say) and a compile, both in its cgroup.
  CountingPair ninja, compile;
  ASSERT_GT(ninja.child(), 0);
  ASSERT_GT(compile.child(), 0);
  for (pid_t pid : {ninja.parent(), ninja.child(), compile.parent(), compile.child()}) {
    ASSERT_TRUE(driver_->AddProcess(build_, pid).ok()) << pid;
  }

  const std::string group = build_ + "/compile-" + std::to_string(compile.parent()) + "-1";
  Status made = driver_->CreateSubgroup(group);
  ASSERT_TRUE(made.ok()) << made.ToString() << " (the build's cgroup has processes of its own)";
  for (pid_t pid : {compile.parent(), compile.child()}) ASSERT_TRUE(driver_->AddProcess(group, pid).ok()) << pid;
  ASSERT_TRUE(driver_->SetFrozen(group, true).ok());
  ASSERT_TRUE(KernelSaysFrozen(group)) << FileText(mount_ + group + "/cgroup.events");
  EXPECT_EQ(driver_->Frozen(group).value_or(false), true);
  EXPECT_EQ(driver_->Frozen(build_).value_or(true), false);

  const uint64_t frozen_at = compile.Count();
  EXPECT_TRUE(ninja.BothCount(200ms)) << "the rest of the build runs on";
  EXPECT_EQ(compile.Count(), frozen_at) << "the frozen compile made progress";
  ::kill(compile.parent(), SIGCONT);
  ::kill(compile.child(), SIGCONT);
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(compile.Count(), frozen_at) << "a SIGCONT woke a frozen process";

  // The build's cgroup still lists every process of the build.
  EXPECT_EQ(Sorted(driver_->Processes(build_).value_or(std::vector<int64_t>{})),
            Sorted({ninja.parent(), ninja.child(), compile.parent(), compile.child()}));
  EXPECT_EQ(driver_->Children(build_).value_or(std::vector<std::string>{}), std::vector<std::string>{group});

  ASSERT_TRUE(driver_->SetFrozen(group, false).ok());
  EXPECT_TRUE(compile.BothCount(200ms)) << "thawed, both run again";

  // Frozen again, then the build is killed: the frozen die too, and the
  // emptied pause group goes with the build's cgroup.
  ASSERT_TRUE(driver_->SetFrozen(group, true).ok());
  ASSERT_TRUE(KernelSaysFrozen(group));
  Status killed = driver_->KillAll(build_);
  ASSERT_TRUE(killed.ok()) << killed.ToString();
  EXPECT_TRUE(driver_->Processes(build_).value_or(std::vector<int64_t>{1}).empty());
  Status removed = driver_->RemoveCgroup(build_);
  EXPECT_TRUE(removed.ok()) << removed.ToString();
  EXPECT_FALSE(std::filesystem::exists(build_dir_));
}

}  // namespace
}  // namespace gpuctl::sys
