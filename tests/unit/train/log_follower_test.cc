#include "agents/train/log_follower.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include "agents/sys/confined_root.h"
#include "agents/sys/file_watch_hub.h"

#include "tests/fakes/temp_dir.h"
#include "tests/unit/train/job_supervisor_fixture.h"
#include "tests/unit/train/log_step_bytes.h"

namespace gpuctl::train {
namespace {

using testing::TempDir;
using test_support::Append;
using test_support::ReadAll;
using test_support::StepBytes;
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

struct Followed {
  std::vector<Chunk> chunks;
  std::string text;
  LogStep::Kind last = LogStep::Kind::kDone;
  std::vector<size_t> truncated;  // which chunks said the log was cut
  size_t local_ranges = 0;        // chunks that named a range of the file
};

// Takes steps until the follower waits or is done.
Followed Drain(LogFollower& follower) {
  Followed out;
  while (true) {
    Result<LogStep> step = follower.Next();
    EXPECT_TRUE(step.ok()) << step.status().message();
    if (!step.ok()) return out;
    if (step->kind != LogStep::Kind::kData) {
      out.last = step->kind;
      return out;
    }
    if (step->truncated) out.truncated.push_back(out.chunks.size());
    if (step->local) ++out.local_ranges;
    std::string bytes = StepBytes(*step);
    out.text += bytes;
    out.chunks.push_back({step->offset, std::move(bytes)});
  }
}

// Follows to the end as the agent's stream does: steps, and on kWait a
// one-shot wait on the hub. `on_text` sees the text so far after each chunk.
Status FollowToEnd(LogFollower& follower, sys::FileWatchHub& hub, std::string& text,
                   const std::function<void(const std::string&)>& on_text, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  std::mutex mutex;
  std::condition_variable woken;
  while (std::chrono::steady_clock::now() < deadline) {
    Result<LogStep> step = follower.Next();
    if (!step.ok()) return step.status();
    if (step->kind == LogStep::Kind::kDone) return Status::Ok();
    if (step->kind == LogStep::Kind::kData) {
      text += StepBytes(*step);
      on_text(text);
      continue;
    }
    bool fired = false;
    uint64_t ticket = hub.WaitOnce(follower.path(), [&] {
      std::lock_guard lock(mutex);
      fired = true;
      woken.notify_all();
    });
    std::unique_lock lock(mutex);
    woken.wait_until(lock, deadline, [&] { return fired; });
    lock.unlock();
    hub.Cancel(ticket);
  }
  return Unavailable("did not end in time");
}

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

// Every test runs twice: the follower reading the bytes (a remote client's
// stream) and naming ranges for a client on this host to read (LogStep::local,
// of at most chunk_bytes each so that the chunk checks hold alike).
class LogFollowerTest : public test_support::JobSupervisorFixture, public ::testing::WithParamInterface<bool> {
 protected:
  LogFollower Open(LogFollowOptions options) {
    options.local_ranges = GetParam();
    options.local_range_bytes = options.chunk_bytes;
    Result<LogFollower> follower = LogFollower::Open(Supervisor(), std::move(options));
    EXPECT_TRUE(follower.ok()) << follower.status().message();
    return std::move(follower).value();
  }

  const std::string log_text_ =
      "torch 2.11.0+cu130\n"
      "step 1 | loss 2.5\n"
      "step 2 | loss 2.25\r\n"
      "\n"
      "step 3 | loss 2.0 and no newline at the end";
};

TEST_P(LogFollowerTest, EndedJobGivesAllBytesInOrder) {
  JobRecord job = StartOk(Spec("done"));
  Append(job.log_path, log_text_);
  EndJob(job, "0\n");
  ASSERT_EQ(Get("done").state, JobState::kSucceeded);

  for (size_t chunk : {size_t{1}, size_t{7}, size_t{256 * 1024}}) {
    LogFollower follower = Open({.job = "done", .chunk_bytes = chunk});
    Followed out = Drain(follower);
    EXPECT_EQ(out.last, LogStep::Kind::kDone);
    EXPECT_EQ(out.text, log_text_) << "chunk " << chunk;
    ExpectContiguous(out.chunks, 0, chunk);
  }
}

// A range names the very file (a client checks both before it reads), and only
// a reader that asked for ranges is handed them.
TEST_P(LogFollowerTest, OnlyALocalReaderIsHandedRangesAndTheyNameTheLogItself) {
  JobRecord job = StartOk(Spec("named"));
  Append(job.log_path, log_text_);
  EndJob(job, "0\n");
  struct stat st {};
  ASSERT_EQ(::stat(job.log_path.c_str(), &st), 0);
  LogFollower follower = Open({.job = "named", .chunk_bytes = 16});
  size_t steps = 0;
  for (Result<LogStep> step = follower.Next(); step.ok() && step->kind == LogStep::Kind::kData;
       step = follower.Next()) {
    ++steps;
    ASSERT_EQ(step->local.has_value(), GetParam());
    if (!step->local) continue;
    EXPECT_TRUE(step->data.empty());
    EXPECT_EQ(step->local->path, job.log_path);
    EXPECT_EQ(step->local->device, static_cast<uint64_t>(st.st_dev));
    EXPECT_EQ(step->local->inode, static_cast<uint64_t>(st.st_ino));
    EXPECT_LE(step->local->length, 16u);
    EXPECT_GT(step->local->length, 0u);
  }
  EXPECT_EQ(steps, (log_text_.size() + 15) / 16);
}

// A container's log is resolved inside its root by the agent; a client would
// follow the container's links on the host, so it is sent, never named.
TEST_P(LogFollowerTest, ALogBeneathAContainersRootIsSentNotNamed) {
  JobRecord job = StartOk(Spec("boxed"));
  Append(job.log_path, log_text_);
  EndJob(job, "0\n");
  sys::AddConfinedRoot(std::filesystem::path(job.log_path).parent_path().parent_path().string());
  LogFollower follower = Open({.job = "boxed"});
  Followed out = Drain(follower);
  EXPECT_EQ(out.text, log_text_);
  EXPECT_EQ(out.local_ranges, 0u);
}

TEST_P(LogFollowerTest, EndedJobWithFollowEndsAtTheEnd) {
  JobRecord job = StartOk(Spec("done"));
  Append(job.log_path, log_text_);
  EndJob(job, "1\n");
  LogFollower follower = Open({.job = "done", .follow = true});
  Followed out = Drain(follower);
  EXPECT_EQ(out.last, LogStep::Kind::kDone);
  EXPECT_EQ(out.text, log_text_);
}

TEST_P(LogFollowerTest, RunningJobWithFollowWaitsAtTheEndAndWithoutIsDone) {
  JobRecord job = StartOk(Spec("live"));
  Append(job.log_path, "first\n");
  LogFollower following = Open({.job = "live", .follow = true});
  Followed out = Drain(following);
  EXPECT_EQ(out.text, "first\n");
  EXPECT_EQ(out.last, LogStep::Kind::kWait);
  Append(job.log_path, "second\n");
  Followed more = Drain(following);
  EXPECT_EQ(more.text, "second\n");
  ASSERT_FALSE(more.chunks.empty());
  EXPECT_EQ(more.chunks[0].offset, 6u);

  LogFollower once = Open({.job = "live"});
  EXPECT_EQ(Drain(once).last, LogStep::Kind::kDone);
}

TEST_P(LogFollowerTest, FromOffsetAndTailLines) {
  JobRecord job = StartOk(Spec("tail"));
  Append(job.log_path, log_text_);
  EndJob(job, "0\n");

  LogFollower at_offset = Open({.job = "tail", .from_offset = 19, .chunk_bytes = 5});
  Followed from = Drain(at_offset);
  EXPECT_EQ(from.text, log_text_.substr(19));
  ExpectContiguous(from.chunks, 19, 5);

  LogFollower last_two = Open({.job = "tail", .tail_lines = 2});
  Followed tail = Drain(last_two);
  EXPECT_EQ(tail.text, "\nstep 3 | loss 2.0 and no newline at the end");
  ASSERT_FALSE(tail.chunks.empty());
  EXPECT_EQ(tail.chunks[0].offset, log_text_.size() - tail.text.size());
}

// --tail 0: none of what is written; with follow, what comes after.
TEST_P(LogFollowerTest, TailZeroLinesStartsAtTheEnd) {
  JobRecord job = StartOk(Spec("tail0"));
  Append(job.log_path, log_text_);
  LogFollower once = Open({.job = "tail0", .tail_lines = 0});
  Followed none = Drain(once);
  EXPECT_EQ(none.text, "");
  EXPECT_EQ(none.last, LogStep::Kind::kDone);

  LogFollower following = Open({.job = "tail0", .tail_lines = 0, .follow = true});
  Followed at_end = Drain(following);
  EXPECT_EQ(at_end.text, "");
  EXPECT_EQ(at_end.last, LogStep::Kind::kWait);
  Append(job.log_path, "\nstep 4\n");
  Followed more = Drain(following);
  EXPECT_EQ(more.text, "\nstep 4\n");
  ASSERT_FALSE(more.chunks.empty());
  EXPECT_EQ(more.chunks[0].offset, log_text_.size());

  // No tail asked: from the start, as before.
  LogFollower all = Open({.job = "tail0"});
  EXPECT_EQ(Drain(all).text, log_text_ + "\nstep 4\n");
}

// logrotate's copytruncate copies the log away and cuts it to 0 while the
// job writes on. A follower that kept its offset would hand over the new
// content from that offset on: a torn line, and the lines before it lost.
TEST_P(LogFollowerTest, ALogCutShorterIsFollowedFromItsNewStart) {
  JobRecord job = StartOk(Spec("rotated"));
  const std::string before = "step 1 | loss 2.5\nstep 2 | loss 2.25\n";
  Append(job.log_path, before);
  LogFollower follower = Open({.job = "rotated", .follow = true});
  EXPECT_EQ(Drain(follower).text, before);

  ASSERT_EQ(::truncate(job.log_path.c_str(), 0), 0);
  Followed at_cut = Drain(follower);
  EXPECT_EQ(at_cut.last, LogStep::Kind::kWait);
  // Said at once, before the job writes again: one empty chunk at the new start.
  ASSERT_EQ(at_cut.chunks.size(), 1u);
  EXPECT_EQ(at_cut.chunks[0].offset, 0u);
  EXPECT_EQ(at_cut.truncated, (std::vector<size_t>{0}));
  const std::string after = "step 3 | loss 2.0\nstep 4 | loss 1.9\nstep 5 | loss 1.8\n";
  Append(job.log_path, after);
  Followed rest = Drain(follower);
  EXPECT_EQ(at_cut.text + rest.text, after);
  EXPECT_EQ(rest.last, LogStep::Kind::kWait);
  EXPECT_TRUE(rest.truncated.empty());
  ExpectContiguous(rest.chunks, 0, 256 * 1024);

  // Cut again, and written to again (less than before) before the follower looks.
  ASSERT_EQ(::truncate(job.log_path.c_str(), 0), 0);
  Append(job.log_path, "step 6\n");
  Followed again = Drain(follower);
  EXPECT_EQ(again.text, "step 6\n");
  ASSERT_FALSE(again.chunks.empty());
  EXPECT_EQ(again.chunks[0].offset, 0u);
  EXPECT_EQ(again.truncated, (std::vector<size_t>{0}));

  // A stream resumed at an offset past the end (the log was cut while the
  // client reconnected) is told alike.
  LogFollower resumed = Open({.job = "rotated", .from_offset = 500, .follow = true});
  Followed from_start = Drain(resumed);
  EXPECT_EQ(from_start.text, "step 6\n");
  EXPECT_EQ(from_start.truncated, (std::vector<size_t>{0}));
  // Without follow, an offset past the end is only the end.
  LogFollower once = Open({.job = "rotated", .from_offset = 500});
  Followed nothing = Drain(once);
  EXPECT_EQ(nothing.text, "");
  EXPECT_EQ(nothing.last, LogStep::Kind::kDone);
}

TEST_P(LogFollowerTest, FollowWakesOnAppendAndEndsWithTheJob) {
  JobRecord job = StartOk(Spec("live"));
  Append(job.log_path, "first\n");
  LogFollower follower = Open({.job = "live", .follow = true});
  // A long tick: only inotify can wake the follower in time.
  sys::FileWatchHub hub({.poll_interval = std::chrono::milliseconds(5000)});

  std::mutex mutex;
  std::condition_variable grew;
  std::string seen;
  auto on_text = [&](const std::string& text) {
    std::lock_guard lock(mutex);
    seen = text;
    grew.notify_all();
  };
  auto wait_for = [&](const std::string& text) {
    std::unique_lock lock(mutex);
    return grew.wait_for(lock, 5s, [&] { return seen == text; });
  };
  std::string expected = "first\n";
  std::vector<std::chrono::steady_clock::duration> round_trips;
  std::thread writer([&] {
    if (!wait_for(expected)) return;
    for (int i = 0; i < 5; ++i) {
      std::string line = "step " + std::to_string(i) + " | loss 1.0\n";
      expected += line;
      std::this_thread::sleep_for(50ms);  // let the follower go back to waiting
      auto sent = std::chrono::steady_clock::now();
      Append(job.log_path, line);
      if (!wait_for(expected)) return;
      round_trips.push_back(std::chrono::steady_clock::now() - sent);
    }
    Append(job.log_path, "the end, unterminated");
    expected += "the end, unterminated";
    EndJob(job, "0\n");
  });
  std::string text;
  Status result = FollowToEnd(follower, hub, text, on_text, 20s);
  writer.join();
  EXPECT_TRUE(result.ok()) << result.message();
  EXPECT_EQ(text, expected);
  EXPECT_EQ(text, ReadAll(job.log_path));
  ASSERT_EQ(round_trips.size(), 5u);
  auto total = std::chrono::steady_clock::duration::zero();
  for (auto rt : round_trips) total += rt;
  EXPECT_LT(total, 2500ms) << "appends did not wake the follower";
  EXPECT_EQ(hub.pending_waits(), 0u);
}

TEST_P(LogFollowerTest, BytesWrittenAsTheJobEndsAreNotLost) {
  JobRecord job = StartOk(Spec("race"));
  Append(job.log_path, "first\n");
  LogFollower follower = Open({.job = "race", .follow = true});
  EXPECT_EQ(Drain(follower).text, "first\n");
  // The job writes its last line and exits between the follower's read
  // (nothing new) and its check whether the job still runs.
  std::this_thread::sleep_for(250ms);  // past the shared end-check interval
  std::atomic<bool> fired{false};
  procs_.SetOnAlive([&](int64_t pid) {
    if (pid != job.pid || fired.exchange(true)) return;
    Append(job.log_path, "last words\n");
    EndJob(job, "1\n");
  });
  Followed rest = Drain(follower);
  EXPECT_TRUE(fired.load());
  EXPECT_EQ(rest.text, "last words\n");
  EXPECT_EQ(rest.last, LogStep::Kind::kDone);
}

TEST_P(LogFollowerTest, ALogThatIsNotARegularFileEndsTheStreamWithAnError) {
  JobRecord job = StartOk(Spec("fifo"));
  ::unlink(job.log_path.c_str());  // a log the job may not have made yet
  ASSERT_EQ(::mkfifo(job.log_path.c_str(), 0600), 0);
  LogFollower follower = Open({.job = "fifo", .follow = true});
  Result<LogStep> step = follower.Next();  // returns at once: never opens the FIFO for reading and blocks
  EXPECT_FALSE(step.ok());
}

TEST_P(LogFollowerTest, UnknownJobIsNotFound) {
  Result<LogFollower> follower = LogFollower::Open(Supervisor(), {.job = "ghost"});
  ASSERT_FALSE(follower.ok());
  EXPECT_EQ(follower.status().code(), ErrorCode::kNotFound);
}

INSTANTIATE_TEST_SUITE_P(ThroughTheAgentAndLocal, LogFollowerTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& p) {
                           return p.param ? "LocalRanges" : "Bytes";
                         });

}  // namespace
}  // namespace gpuctl::train
