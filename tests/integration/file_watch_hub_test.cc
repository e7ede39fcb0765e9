// FileWatchHub against real inotify: wakes on change, at the tick, never
// after Cancel, and keeps working past its watch limit by polling.
#include "agents/sys/file_watch_hub.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/fakes/temp_dir.h"

namespace gpuctl::sys {
namespace {

using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;
using gpuctl::testing::TempDir;

void Append(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::app | std::ios::binary);
  out << text;
}

// Counts wakeups and lets a test wait for them.
class Wakeups {
 public:
  FileWatchHub::Wakeup Make() {
    return [this] {
      std::lock_guard lock(mutex_);
      ++count_;
      changed_.notify_all();
    };
  }
  bool WaitFor(int count, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return count_ >= count; });
  }
  int count() {
    std::lock_guard lock(mutex_);
    return count_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int count_ = 0;
};

class FileWatchHubTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_.WriteFile("train.log", "step 1\n");
    path_ = dir_.path() + "/train.log";
  }
  TempDir dir_;
  std::string path_;
};

TEST_F(FileWatchHubTest, AnAppendWakesLongBeforeTheTick) {
  FileWatchHub hub({.poll_interval = 20s});
  Wakeups woken;
  hub.WaitOnce(path_, woken.Make());
  EXPECT_EQ(hub.watched_files(), 1u);
  const auto start = SteadyClock::now();
  Append(path_, "step 2\n");
  ASSERT_TRUE(woken.WaitFor(1, 5s)) << "the append did not wake the wait";
  EXPECT_LT(SteadyClock::now() - start, 5s);
  EXPECT_EQ(hub.pending_waits(), 0u) << "a wait is one-shot";
}

TEST_F(FileWatchHubTest, ManyWaitsOnOneFileShareOneWatchAndAllWake) {
  FileWatchHub hub({.poll_interval = 20s});
  Wakeups woken;
  for (int i = 0; i < 100; ++i) hub.WaitOnce(path_, woken.Make());
  EXPECT_EQ(hub.watched_files(), 1u);
  Append(path_, "x\n");
  EXPECT_TRUE(woken.WaitFor(100, 5s)) << woken.count() << " of 100 woke";
}

TEST_F(FileWatchHubTest, TheTickWakesWaitsWithNoChange) {
  FileWatchHub hub({.poll_interval = 100ms});
  Wakeups woken;
  const auto start = SteadyClock::now();
  hub.WaitOnce(path_, woken.Make());
  ASSERT_TRUE(woken.WaitFor(1, 5s));
  EXPECT_GE(SteadyClock::now() - start, 50ms) << "woke with no change before the tick";
}

TEST_F(FileWatchHubTest, FilesPastTheWatchLimitArePolled) {
  FileWatchHub hub({.max_watched_files = 2, .poll_interval = 100ms});
  Wakeups woken;
  std::vector<std::string> paths;
  for (int i = 0; i < 5; ++i) {
    paths.push_back(dir_.path() + "/log" + std::to_string(i));
    dir_.WriteFile("log" + std::to_string(i), "");
    hub.WaitOnce(paths.back(), woken.Make());
  }
  EXPECT_EQ(hub.watched_files(), 2u);
  EXPECT_TRUE(woken.WaitFor(5, 5s)) << "polled files were never woken";
}

TEST_F(FileWatchHubTest, AMissingFileIsPolledUntilItExists) {
  FileWatchHub hub({.poll_interval = 100ms});
  Wakeups woken;
  hub.WaitOnce(dir_.path() + "/not-yet.log", woken.Make());
  EXPECT_EQ(hub.watched_files(), 0u);
  EXPECT_TRUE(woken.WaitFor(1, 5s));
}

TEST_F(FileWatchHubTest, DeletionWakesAndTheNameIsWatchedAfreshLater) {
  FileWatchHub hub({.poll_interval = 20s});
  Wakeups woken;
  hub.WaitOnce(path_, woken.Make());
  ASSERT_EQ(::unlink(path_.c_str()), 0);
  ASSERT_TRUE(woken.WaitFor(1, 5s));
  // A rerun's new log under the same name: its appends wake too.
  dir_.WriteFile("train.log", "");
  hub.WaitOnce(path_, woken.Make());
  Append(path_, "rerun\n");
  EXPECT_TRUE(woken.WaitFor(2, 5s));
}

TEST_F(FileWatchHubTest, ACancelledWaitNeverRuns) {
  FileWatchHub hub({.poll_interval = 50ms});
  Wakeups woken;
  uint64_t ticket = hub.WaitOnce(path_, woken.Make());
  hub.Cancel(ticket);
  hub.Cancel(ticket);  // twice is fine
  Append(path_, "x\n");
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(woken.count(), 0);
  EXPECT_EQ(hub.pending_waits(), 0u);
}

TEST_F(FileWatchHubTest, CancelWaitsOutAWakeupThatIsRunning) {
  FileWatchHub hub({.poll_interval = 20s});
  std::atomic<bool> inside{false}, finished{false};
  uint64_t ticket = hub.WaitOnce(path_, [&] {
    inside = true;
    std::this_thread::sleep_for(300ms);
    finished = true;
  });
  Append(path_, "x\n");
  while (!inside) std::this_thread::sleep_for(1ms);
  hub.Cancel(ticket);
  EXPECT_TRUE(finished.load()) << "Cancel returned while the wakeup still ran";
}

TEST_F(FileWatchHubTest, AWakeupMayWaitAgain) {
  FileWatchHub hub({.poll_interval = 20s});
  Wakeups second;
  hub.WaitOnce(path_, [&] { hub.WaitOnce(path_, second.Make()); });
  // Writes through one open descriptor: a writer's close is a change of its
  // own (IN_CLOSE_WRITE) that a new wait may rightly wake for, and with
  // Append it could land after the first wakeup.
  int fd = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "a\n", 2), 2);
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(second.count(), 0) << "the new wait fired for the change that woke the first";
  ASSERT_EQ(::write(fd, "b\n", 2), 2);
  EXPECT_TRUE(second.WaitFor(1, 5s));
  ::close(fd);
}

TEST_F(FileWatchHubTest, ALinkInPlaceOfTheFileIsNotFollowed) {
  dir_.WriteFile("host-file", "secret\n");
  ASSERT_EQ(::unlink(path_.c_str()), 0);
  ASSERT_EQ(::symlink((dir_.path() + "/host-file").c_str(), path_.c_str()), 0);
  FileWatchHub hub({.poll_interval = 20s});
  Wakeups woken;
  hub.WaitOnce(path_, woken.Make());
  Append(dir_.path() + "/host-file", "more\n");
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(woken.count(), 0) << "the watch followed the link to its target";
}

}  // namespace
}  // namespace gpuctl::sys
