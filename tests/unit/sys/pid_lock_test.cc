// The agent's lock files (socket and state dir): a live holder is refused at
// once, naming its pid; a lock whose written holder is gone (a killed
// agent's child still between its spawn and its exec) is waited for.
#include "agents/sys/pid_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "tests/fakes/temp_dir.h"

namespace gpuctl::sys {
namespace {

// Holds `path`'s lock on a descriptor of its own, with `pid` written in it.
int HoldLockAs(const std::string& path, pid_t pid) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  const std::string text = std::to_string(pid) + "\n";
  EXPECT_EQ(::pwrite(fd, text.data(), text.size(), 0), static_cast<ssize_t>(text.size()));
  return fd;
}

pid_t DeadPid() {
  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  return child;
}

TEST(PidLock, ALiveHolderIsRefusedNamingItsPid) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/gpuctld.lock";
  int held = HoldLockAs(path, ::getpid());
  Result<PidLock> second = PidLock::Acquire(path);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), ErrorCode::kAlreadyExists);
  EXPECT_NE(second.status().message().find("held by pid " + std::to_string(::getpid())), std::string::npos)
      << second.status().message();
  ::close(held);
  EXPECT_TRUE(PidLock::Acquire(path).ok()) << "free once its holder lets go";
}

// The lock still held a moment after the agent that wrote its pid died: the
// next agent takes it once the last copy goes, instead of refusing to start.
TEST(PidLock, ALockWhoseWrittenHolderIsGoneIsWaitedFor) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/gpuctld.lock";
  int held = HoldLockAs(path, DeadPid());
  std::thread lets_go([held] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ::close(held);
  });
  Result<PidLock> lock = PidLock::Acquire(path);
  lets_go.join();
  ASSERT_TRUE(lock.ok()) << lock.status().ToString();
}

}  // namespace
}  // namespace gpuctl::sys
