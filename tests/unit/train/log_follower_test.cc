#include "agents/train/log_follower.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/fakes/temp_dir.h"
#include "tests/unit/train/job_supervisor_fixture.h"

namespace gpuctl::train {
namespace {

using testing::TempDir;
using test_support::Append;
using test_support::ReadAll;
using namespace std::chrono_literals;

// --- TailStartOffset ---

// The answer worked out the plain way: where each line starts.
uint64_t NaiveTailStart(const std::string& content, uint32_t lines) {
  if (lines == 0) return content.size();
  std::vector<uint64_t> starts;
  if (!content.empty()) starts.push_back(0);
  for (size_t i = 0; i + 1 < content.size(); ++i) {
    if (content[i] == '\n') starts.push_back(i + 1);
  }
  return lines >= starts.size() ? 0 : starts[starts.size() - lines];
}

class TailStartOffsetTest : public ::testing::Test {
 protected:
  uint64_t Tail(const std::string& content, uint32_t lines) {
    dir_.WriteFile("log", content);
    Result<uint64_t> r = TailStartOffset(dir_.path() + "/log", lines);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? *r : ~uint64_t{0};
  }
  TempDir dir_;
};

TEST_F(TailStartOffsetTest, NoTrailingNewline) {
  EXPECT_EQ(Tail("a\nbb\nccc", 1), 5u);
  EXPECT_EQ(Tail("a\nbb\nccc", 2), 2u);
  EXPECT_EQ(Tail("a\nbb\nccc", 3), 0u);
}

TEST_F(TailStartOffsetTest, TrailingNewline) {
  EXPECT_EQ(Tail("a\nbb\nccc\n", 1), 5u);
  EXPECT_EQ(Tail("a\nbb\nccc\n", 2), 2u);
  EXPECT_EQ(Tail("a\nbb\nccc\n", 3), 0u);
  EXPECT_EQ(Tail("a\n\n\n", 2), 2u);  // empty lines count
  EXPECT_EQ(Tail("\n", 1), 0u);
}

TEST_F(TailStartOffsetTest, FewerLinesThanAsked) {
  EXPECT_EQ(Tail("a\nbb\n", 10), 0u);
  EXPECT_EQ(Tail("only", 5), 0u);
  EXPECT_EQ(Tail("a\nbb\n", 0xFFFFFFFFu), 0u);
}

TEST_F(TailStartOffsetTest, EmptyFileAndZeroLines) {
  EXPECT_EQ(Tail("", 3), 0u);
  EXPECT_EQ(Tail("a\nbb\n", 0), 5u);  // nothing: start at the end
}

TEST_F(TailStartOffsetTest, MissingFileIsNotFound) {
  Result<uint64_t> r = TailStartOffset(dir_.path() + "/nope", 3);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kNotFound);
}

TEST_F(TailStartOffsetTest, LinesLongerThanTheReadBlock) {
  const std::string a(100 * 1024, 'a'), b(70 * 1024, 'b'), c(200 * 1024, 'c');
  const std::string log = a + "\n" + b + "\n" + "z\n" + c;
  EXPECT_EQ(Tail(log, 1), a.size() + b.size() + 4);
  EXPECT_EQ(Tail(log, 2), a.size() + b.size() + 2);
  EXPECT_EQ(Tail(log, 3), a.size() + 1);
  EXPECT_EQ(Tail(log, 4), 0u);
  EXPECT_EQ(Tail(c, 1), 0u);
}

TEST_F(TailStartOffsetTest, NewlinesAroundBlockBoundariesMatchTheNaiveAnswer) {
  constexpr size_t kBlock = 64 * 1024;
  // Put newlines at and next to the 64 KiB (and 128 KiB) marks counted from
  // the end, where the backwards scan crosses from one block to the next.
  for (size_t tail_len : {kBlock - 2, kBlock - 1, kBlock, kBlock + 1}) {
    for (bool trailing : {false, true}) {
      std::string log = std::string(3000, 'h') + "\n" + std::string(kBlock - 1, 'm') + "\n";
      std::string tail(tail_len, 't');
      if (trailing) tail.back() = '\n';
      tail[tail_len / 2] = '\n';
      log += tail;
      for (uint32_t n : {1u, 2u, 3u, 4u, 5u}) {
        EXPECT_EQ(Tail(log, n), NaiveTailStart(log, n)) << "tail_len " << tail_len << " trailing " << trailing
                                                        << " lines " << n;
      }
    }
  }
}

// --- LogFollower ---

struct Chunk {
  uint64_t offset;
  std::string data;
};

// Collects what a follower hands over; thread-safe, and can be waited on.
class Collector {
 public:
  LogFollower::Sink sink() {
    return [this](uint64_t offset, std::string_view data) {
      std::lock_guard lock(mutex_);
      chunks_.push_back({offset, std::string(data)});
      text_ += data;
      changed_.notify_all();
      return keep_going_;
    };
  }
  // Waits until `text` was handed over in all; false after `timeout`.
  bool WaitForText(const std::string& text, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return text_ == text; });
  }
  std::vector<Chunk> chunks() const {
    std::lock_guard lock(mutex_);
    return chunks_;
  }
  std::string text() const {
    std::lock_guard lock(mutex_);
    return text_;
  }
  void StopAfterNext() {
    std::lock_guard lock(mutex_);
    keep_going_ = false;
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Chunk> chunks_;
  std::string text_;
  bool keep_going_ = true;
};

// Checks that chunks follow on from `start` with no gap or overlap.
void ExpectContiguous(const std::vector<Chunk>& chunks, uint64_t start, size_t max_chunk) {
  uint64_t at = start;
  for (const Chunk& c : chunks) {
    EXPECT_EQ(c.offset, at);
    EXPECT_FALSE(c.data.empty());
    EXPECT_LE(c.data.size(), max_chunk);
    at += c.data.size();
  }
}

class LogFollowerTest : public test_support::JobSupervisorFixture {
 protected:
  // Runs `follower` on a thread; the future says how it ended.
  static std::future<Status> RunAsync(LogFollower& follower, Collector& out) {
    return std::async(std::launch::async, [&follower, &out] { return follower.Run(out.sink()); });
  }
  // Waits for a follower run; cancels it (and fails) if it does not end in time.
  static Status Finish(LogFollower& follower, std::future<Status>& done, std::chrono::seconds limit) {
    if (done.wait_for(limit) != std::future_status::ready) {
      ADD_FAILURE() << "the follower did not end within " << limit.count() << " s";
      follower.Cancel();
    }
    return done.get();
  }

  const std::string log_text_ =
      "torch 2.11.0+cu130\n"
      "step 1 | loss 2.5\n"
      "step 2 | loss 2.25\r\n"
      "\n"
      "step 3 | loss 2.0 and no newline at the end";
};

TEST_F(LogFollowerTest, EndedJobGivesAllBytesInOrder) {
  JobRecord job = StartOk(Spec("done"));
  Append(job.log_path, log_text_);
  EndJob(job, "0\n");
  ASSERT_EQ(Get("done").state, JobState::kSucceeded);

  for (size_t chunk : {size_t{1}, size_t{7}, size_t{256 * 1024}}) {
    Collector out;
    LogFollower follower(Supervisor(), {.job = "done", .chunk_bytes = chunk});
    ASSERT_TRUE(follower.Run(out.sink()).ok());
    EXPECT_EQ(out.text(), log_text_) << "chunk " << chunk;
    ExpectContiguous(out.chunks(), 0, chunk);
  }
}

TEST_F(LogFollowerTest, EndedJobWithFollowEndsAtTheEnd) {
  JobRecord job = StartOk(Spec("done"));
  Append(job.log_path, log_text_);
  EndJob(job, "1\n");
  Collector out;
  LogFollower follower(Supervisor(), {.job = "done", .follow = true});
  std::future<Status> done = RunAsync(follower, out);
  EXPECT_TRUE(Finish(follower, done, 10s).ok());
  EXPECT_EQ(out.text(), log_text_);
}

TEST_F(LogFollowerTest, FromOffsetAndTailLines) {
  JobRecord job = StartOk(Spec("tail"));
  Append(job.log_path, log_text_);
  EndJob(job, "0\n");

  Collector from;
  LogFollower at_offset(Supervisor(), {.job = "tail", .from_offset = 19, .chunk_bytes = 5});
  ASSERT_TRUE(at_offset.Run(from.sink()).ok());
  EXPECT_EQ(from.text(), log_text_.substr(19));
  ExpectContiguous(from.chunks(), 19, 5);

  Collector tail;
  LogFollower last_two(Supervisor(), {.job = "tail", .tail_lines = 2});
  ASSERT_TRUE(last_two.Run(tail.sink()).ok());
  EXPECT_EQ(tail.text(), "\nstep 3 | loss 2.0 and no newline at the end");
  ASSERT_FALSE(tail.chunks().empty());
  EXPECT_EQ(tail.chunks()[0].offset, log_text_.size() - tail.text().size());
}

TEST_F(LogFollowerTest, FollowWakesOnAppendAndEndsWithTheJob) {
  JobRecord job = StartOk(Spec("live"));
  Append(job.log_path, "first\n");
  Collector out;
  LogFollower follower(Supervisor(), {.job = "live", .follow = true});
  std::future<Status> done = RunAsync(follower, out);

  std::string expected = "first\n";
  ASSERT_TRUE(out.WaitForText(expected, 5s));
  // Each line is appended once the last one arrived, from another thread,
  // as a job would write. inotify wakes the follower at once; the 500 ms
  // backstop alone would make every round trip about that long.
  std::vector<std::chrono::steady_clock::duration> round_trips;
  std::thread writer([&] {
    for (int i = 0; i < 5; ++i) {
      std::string line = "step " + std::to_string(i) + " | loss 1.0\n";
      expected += line;
      std::this_thread::sleep_for(50ms);  // let the follower go back to waiting
      auto sent = std::chrono::steady_clock::now();
      Append(job.log_path, line);
      if (!out.WaitForText(expected, 5s)) return;
      round_trips.push_back(std::chrono::steady_clock::now() - sent);
    }
    Append(job.log_path, "the end, unterminated");
    expected += "the end, unterminated";
    EndJob(job, "0\n");
  });
  writer.join();
  Status result = Finish(follower, done, 10s);
  EXPECT_TRUE(result.ok()) << result.message();
  EXPECT_EQ(out.text(), expected);
  EXPECT_EQ(out.text(), ReadAll(job.log_path));
  ExpectContiguous(out.chunks(), 0, 256 * 1024);
  ASSERT_EQ(round_trips.size(), 5u);
  auto total = std::chrono::steady_clock::duration::zero();
  for (auto rt : round_trips) total += rt;
  EXPECT_LT(total, 1000ms) << "appends did not wake the follower";
}

TEST_F(LogFollowerTest, BytesWrittenAsTheJobEndsAreNotLost) {
  JobRecord job = StartOk(Spec("race"));
  Append(job.log_path, "first\n");
  Collector out;
  LogFollower follower(Supervisor(), {.job = "race", .follow = true});
  std::future<Status> done = RunAsync(follower, out);
  ASSERT_TRUE(out.WaitForText("first\n", 5s));
  // The job writes its last line and exits between the follower's read
  // (nothing new) and its check whether the job still runs.
  std::atomic<bool> fired{false};
  procs_.SetOnAlive([&](int64_t pid) {
    if (pid != job.pid || fired.exchange(true)) return;
    Append(job.log_path, "last words\n");
    EndJob(job, "1\n");
  });
  Status result = Finish(follower, done, 10s);
  EXPECT_TRUE(result.ok()) << result.message();
  EXPECT_TRUE(fired.load());
  EXPECT_EQ(out.text(), "first\nlast words\n");
}

TEST_F(LogFollowerTest, CancelEndsAFollowPromptly) {
  StartOk(Spec("forever"));
  Collector out;
  LogFollower follower(Supervisor(), {.job = "forever", .follow = true});
  std::future<Status> done = RunAsync(follower, out);
  std::this_thread::sleep_for(100ms);
  auto before = std::chrono::steady_clock::now();
  follower.Cancel();
  ASSERT_EQ(done.wait_for(2s), std::future_status::ready);
  EXPECT_LT(std::chrono::steady_clock::now() - before, 2s);
  EXPECT_EQ(done.get().code(), ErrorCode::kUnavailable);
}

TEST_F(LogFollowerTest, SinkThatStopsEndsTheRun) {
  JobRecord job = StartOk(Spec("stopsink"));
  Append(job.log_path, log_text_);
  Collector out;
  out.StopAfterNext();
  LogFollower follower(Supervisor(), {.job = "stopsink", .follow = true, .chunk_bytes = 4});
  Status s = follower.Run(out.sink());
  EXPECT_EQ(s.code(), ErrorCode::kUnavailable);
  EXPECT_EQ(out.chunks().size(), 1u);
}

TEST_F(LogFollowerTest, UnknownJobIsNotFound) {
  Collector out;
  LogFollower follower(Supervisor(), {.job = "ghost"});
  EXPECT_EQ(follower.Run(out.sink()).code(), ErrorCode::kNotFound);
  EXPECT_TRUE(out.chunks().empty());
}

}  // namespace
}  // namespace gpuctl::train
