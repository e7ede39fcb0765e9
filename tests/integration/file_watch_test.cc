// FileChangeWaiter against real inotify.
#include "agents/sys/file_watch.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <future>
#include <thread>

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

class FileWatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_.WriteFile("train.log", "step 1\n");
    path_ = dir_.path() + "/train.log";
    auto waiter = WatchFile(path_);
    ASSERT_TRUE(waiter.ok()) << waiter.status().ToString();
    waiter_ = std::move(waiter).value();
  }

  TempDir dir_;
  std::string path_;
  std::unique_ptr<FileChangeWaiter> waiter_;
};

TEST_F(FileWatchTest, AnAppendFromAnotherThreadWakesWaitEarly) {
  std::thread writer([&] {
    std::this_thread::sleep_for(100ms);
    Append(path_, "step 2\n");
  });
  const auto start = SteadyClock::now();
  const bool changed = waiter_->Wait(20s);
  const auto waited = SteadyClock::now() - start;
  writer.join();
  EXPECT_TRUE(changed);
  EXPECT_LT(waited, 5s) << "Wait did not wake on the append";
}

TEST_F(FileWatchTest, NoChangeTimesOutWithFalse) {
  const auto start = SteadyClock::now();
  EXPECT_FALSE(waiter_->Wait(200ms));
  EXPECT_GE(SteadyClock::now() - start, 190ms) << "Wait returned before its timeout";
}

TEST_F(FileWatchTest, ChangesBetweenWaitsAreNotLostAndAreDrainedOnce) {
  for (int i = 0; i < 50; ++i) Append(path_, "line\n");
  EXPECT_TRUE(waiter_->Wait(0ms)) << "writes made before Wait must count";
  EXPECT_FALSE(waiter_->Wait(100ms)) << "one wake-up should consume all queued events";
}

TEST_F(FileWatchTest, DeletionWakesWait) {
  ASSERT_EQ(::unlink(path_.c_str()), 0);
  EXPECT_TRUE(waiter_->Wait(5s));
}

TEST_F(FileWatchTest, InterruptWakesABlockedWaitAndLaterWaitsReturnAtOnce) {
  auto blocked = std::async(std::launch::async, [&] {
    const auto start = SteadyClock::now();
    const bool changed = waiter_->Wait(30s);
    return std::make_pair(changed, SteadyClock::now() - start);
  });
  std::this_thread::sleep_for(100ms);
  waiter_->Interrupt();
  ASSERT_EQ(blocked.wait_for(5s), std::future_status::ready) << "Interrupt did not wake Wait";
  auto [changed, waited] = blocked.get();
  EXPECT_FALSE(changed);
  EXPECT_LT(waited, 5s);

  Append(path_, "after\n");
  const auto start = SteadyClock::now();
  EXPECT_FALSE(waiter_->Wait(10s)) << "after Interrupt, Wait reports no change";
  EXPECT_LT(SteadyClock::now() - start, 1s);
  waiter_->Interrupt();  // twice is fine
  EXPECT_FALSE(waiter_->Wait(10s));
}

TEST(FileWatch, MissingFileIsNotFound) {
  TempDir dir;
  auto waiter = WatchFile(dir.path() + "/no-such.log");
  ASSERT_FALSE(waiter.ok());
  EXPECT_EQ(waiter.status().code(), ErrorCode::kNotFound) << waiter.status().ToString();
}

}  // namespace
}  // namespace gpuctl::sys
