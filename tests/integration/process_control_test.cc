// ProcessControl against real processes forked by the test, each in a
// process group of its own.
#include "agents/sys/process_control.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <vector>

#include "agents/sys/host_fs.h"
#include "agents/sys/proc_stat.h"
#include "tests/fakes/skip_policy.h"
#include "tests/integration/process_support.h"

namespace gpuctl::sys {
namespace {

using namespace std::chrono_literals;
using gpuctl::testing::WaitUntil;

// Forks a child that leads a new process group and runs `body` (only
// async-signal-safe calls: the test process has threads).
template <typename Body>
pid_t ForkGroupLeader(Body body) {
  pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    body();
    ::_exit(0);
  }
  if (pid > 0) ::setpgid(pid, pid);  // either side may run first
  return pid;
}

void PauseForever() {
  for (;;) ::pause();
}

char StateOf(const HostFs& fs, pid_t pid) {
  auto text = fs.ReadFile("proc/" + std::to_string(pid) + "/stat");
  if (!text.ok()) return '?';
  auto stat = ParseProcStat(*text);
  return stat.ok() ? stat->state : '?';
}

class ProcessControlTest : public ::testing::Test {
 protected:
  void TearDown() override {
    for (pid_t pid : children_) {
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  }
  pid_t Track(pid_t pid) {
    if (pid > 0) children_.push_back(pid);
    return pid;
  }
  void Reaped(pid_t pid) { std::erase(children_, pid); }

  HostFs fs_{"/"};
  std::unique_ptr<ProcessControl> control_ = MakeProcessControl(fs_);
  std::vector<pid_t> children_;
};

TEST_F(ProcessControlTest, SeesALiveChildAndItsGroup) {
  pid_t pid = Track(ForkGroupLeader(PauseForever));
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(WaitUntil([&] { return control_->ProcessGroup(pid) == pid; }, 5s));
  EXPECT_TRUE(control_->Alive(pid));
  EXPECT_TRUE(control_->GroupAlive(pid));

  auto start = control_->StartTime(pid);
  ASSERT_TRUE(start.has_value());
  EXPECT_EQ(control_->StartTime(pid), start) << "start time must not drift";
  auto self_start = control_->StartTime(::getpid());
  ASSERT_TRUE(self_start.has_value());
  EXPECT_GE(*start, *self_start) << "the child cannot have started before the test";
}

TEST_F(ProcessControlTest, SignalGroupTerminatesTheGroupAndGoneIsFine) {
  pid_t pid = Track(ForkGroupLeader(PauseForever));
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(WaitUntil([&] { return control_->ProcessGroup(pid) == pid; }, 5s));

  Status sent = control_->SignalGroup(pid, SIGTERM);
  ASSERT_TRUE(sent.ok()) << sent.ToString();
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  Reaped(pid);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGTERM);

  EXPECT_FALSE(control_->Alive(pid));
  EXPECT_FALSE(control_->GroupAlive(pid));
  EXPECT_FALSE(control_->StartTime(pid).has_value());
  // ESRCH: already gone is not an error.
  EXPECT_TRUE(control_->Signal(pid, SIGTERM).ok());
  EXPECT_TRUE(control_->SignalGroup(pid, SIGTERM).ok());
}

// process_mrelease touches only a dying process: a live one (a pid reused
// since the kill) keeps running; a killed one is released and reaped as
// killed; a reaped one is gone, which is fine.
TEST_F(ProcessControlTest, ReleaseMemoryLeavesTheLiveAloneAndFreesTheDying) {
  pid_t pid = Track(ForkGroupLeader(PauseForever));
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(WaitUntil([&] { return control_->ProcessGroup(pid) == pid; }, 5s));
  Status live = control_->ReleaseMemory(pid);
  EXPECT_TRUE(live.ok()) << live.ToString();
  EXPECT_EQ(::waitpid(pid, nullptr, WNOHANG), 0) << "a live process was touched";
  EXPECT_NE(StateOf(fs_, pid), 'Z');

  ASSERT_TRUE(control_->Signal(pid, SIGKILL).ok());
  Status dying = control_->ReleaseMemory(pid);
  EXPECT_TRUE(dying.ok()) << dying.ToString();
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  Reaped(pid);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  EXPECT_TRUE(control_->ReleaseMemory(pid).ok()) << "gone is fine";
  EXPECT_EQ(control_->ReleaseMemory(-1).code(), ErrorCode::kInvalidArgument);
}

// A clone(CLONE_VM) child shares the test's address space, as
// LeakSanitizer's tracer shares a sanitized compile's; a forked one has its
// own. Only raw syscalls in the clone: it runs on the test's memory.
int PauseInSharedMemory(void*) {
  for (;;) ::syscall(SYS_pause);
}

TEST_F(ProcessControlTest, SameAddressSpaceTellsACloneVmChildFromAForkedOne) {
  if (!control_->SameAddressSpace(::getpid(), ::getpid())) {
    GPUCTL_SKIP_ALLOWED(kPlatform) << "kcmp(2) cannot be used here (a kernel without CONFIG_KCMP, or a seccomp filter)";
  }
  static std::vector<char> stack(256 << 10);  // outlives the child (TearDown reaps it)
  pid_t shared = Track(::clone(PauseInSharedMemory, stack.data() + stack.size(), CLONE_VM | SIGCHLD, nullptr));
  ASSERT_GT(shared, 0);
  pid_t forked = Track(ForkGroupLeader(PauseForever));
  ASSERT_GT(forked, 0);
  EXPECT_EQ(control_->SameAddressSpace(shared, ::getpid()), std::optional<bool>(true));
  EXPECT_EQ(control_->SameAddressSpace(forked, ::getpid()), std::optional<bool>(false));
  EXPECT_EQ(control_->SameAddressSpace(0, ::getpid()), std::nullopt);
  // Under a fixture tree the pids are not this host's: never asked.
  HostFs fixture{"/tmp"};
  EXPECT_EQ(MakeProcessControl(fixture)->SameAddressSpace(shared, ::getpid()), std::nullopt);
}

TEST_F(ProcessControlTest, AZombieIsNotAlive) {
  pid_t pid = Track(ForkGroupLeader([] {}));
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(WaitUntil([&] { return StateOf(fs_, pid) == 'Z'; }, 5s));
  ASSERT_EQ(::kill(pid, 0), 0) << "kill alone cannot tell a zombie from a live process";
  EXPECT_FALSE(control_->Alive(pid));
  EXPECT_FALSE(control_->GroupAlive(pid));
  EXPECT_TRUE(control_->StartTime(pid).has_value()) << "a zombie still has its stat";
}

// The leader exits (a zombie until reaped) while a member of its group runs on.
TEST_F(ProcessControlTest, GroupLivesWhileAMemberRunsAfterTheLeaderExited) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  pid_t leader = Track(ForkGroupLeader([&] {
    pid_t member = ::fork();
    if (member == 0) PauseForever();
    (void)!::write(pipe_fds[1], &member, sizeof member);
  }));
  ASSERT_GT(leader, 0);
  ::close(pipe_fds[1]);
  pid_t member = -1;
  ASSERT_EQ(::read(pipe_fds[0], &member, sizeof member), static_cast<ssize_t>(sizeof member));
  ::close(pipe_fds[0]);
  ASSERT_TRUE(WaitUntil([&] { return StateOf(fs_, leader) == 'Z'; }, 5s));

  EXPECT_FALSE(control_->Alive(leader));
  EXPECT_TRUE(control_->Alive(member));
  EXPECT_EQ(control_->ProcessGroup(member), leader);
  EXPECT_TRUE(control_->GroupAlive(leader));

  ASSERT_TRUE(control_->SignalGroup(leader, SIGKILL).ok());
  // The member's new parent reaps it, or it stays a zombie: either way the
  // group no longer runs anything.
  EXPECT_TRUE(WaitUntil([&] { return !control_->GroupAlive(leader); }, 5s));
}

TEST_F(ProcessControlTest, RefusesPidsThatMeanManyProcesses) {
  EXPECT_EQ(control_->Signal(0, SIGTERM).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(control_->Signal(-1, SIGTERM).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(control_->SignalGroup(0, SIGTERM).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(control_->SignalGroup(1, SIGTERM).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(control_->SignalGroup(-5, SIGTERM).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(control_->Signal(int64_t{1} << 40, SIGTERM).code(), ErrorCode::kInvalidArgument);
  EXPECT_FALSE(control_->Alive(0));
  EXPECT_FALSE(control_->Alive(-1));
  EXPECT_FALSE(control_->GroupAlive(0));
  EXPECT_FALSE(control_->StartTime(0).has_value());
}

TEST_F(ProcessControlTest, SeesItselfAndInit) {
  EXPECT_TRUE(control_->Alive(::getpid()));
  EXPECT_EQ(control_->ProcessGroup(::getpid()), static_cast<int64_t>(::getpgrp()));
  EXPECT_TRUE(control_->Alive(1)) << "pid 1 exists (EPERM counts as alive)";
}

}  // namespace
}  // namespace gpuctl::sys
