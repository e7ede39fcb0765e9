// The log follower across attempts (LogFollowOptions::across_attempts), on a
// JobSupervisor over fakes whose OOM relaunch and GPU queue are real: a
// follower reads attempt 1 to its end, says where attempt 2 starts and what
// the relaunch changed, reads attempt 2, and ends only when the job has
// ended for good; --attempt N reads one attempt; a queued job is waited for.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "agents/train/attempt_logs.h"
#include "agents/train/log_follower.h"
#include "common/units.h"
#include "tests/unit/train/job_supervisor_fixture.h"
#include "tests/unit/train/log_step_bytes.h"

namespace gpuctl::train {
namespace {

using test_support::Append;
using test_support::WaitFor;
using namespace std::chrono_literals;

constexpr std::string_view kOomLine =
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 16.00 GiB. GPU 0 has a total capacity of "
    "79.11 GiB of which 1.25 GiB is free.\n";

// What a follower handed over, attempt by attempt.
struct AttemptText {
  uint32_t attempt = 0;
  std::string run_id;
  std::vector<std::string> changes;
  std::string text;
};

struct FollowedAttempts {
  std::vector<AttemptText> attempts;
  std::vector<std::string> queued;  // waiting_for of each queued step
  bool done = false;
  bool error = false;
};

// Steps until `until` holds or the follower is done; on kWait sleeps a
// little (the owner thread and the end check act on real time).
void StepUntil(LogFollower& follower, FollowedAttempts& out, const std::function<bool()>& until) {
  for (int i = 0; i < 6000 && !until(); ++i) {  // 30 s of waits at most
    Result<LogStep> step = follower.Next();
    if (!step.ok()) {
      ADD_FAILURE() << step.status().message();
      out.error = true;
      return;
    }
    if (step->kind == LogStep::Kind::kDone) {
      out.done = true;
      return;
    }
    if (step->kind == LogStep::Kind::kWait) {
      std::this_thread::sleep_for(5ms);
      continue;
    }
    if (step->queued_waiting_for) out.queued.push_back(*step->queued_waiting_for);
    if (step->attempt_start) {
      out.attempts.push_back({step->attempt_start->attempt, step->attempt_start->run_id,
                              step->attempt_start->changes, {}});
    }
    if (std::string bytes = test_support::StepBytes(*step); !bytes.empty()) {
      if (out.attempts.empty()) {
        ADD_FAILURE() << "data before any attempt_start";
        out.error = true;
        return;
      }
      out.attempts.back().text += bytes;
    }
  }
}

class LogFollowerAttemptsTest : public test_support::JobSupervisorFixture {
 protected:
  static JobSpec Recovering(const std::string& name) {
    JobSpec spec = Spec(name);
    spec.command = {"python", "train.py", "--max-anchors", "1024"};
    spec.oom.recover = true;
    return spec;
  }

  LogFollower OpenFollower(LogFollowOptions options) {
    Result<LogFollower> follower = LogFollower::Open(Supervisor(), std::move(options));
    EXPECT_TRUE(follower.ok()) << follower.status().message();
    return std::move(follower).value();
  }

  // Attempt 1 printed `first` and died of CUDA OOM; the agent relaunched it.
  // Returns attempt 2's record.
  JobRecord RelaunchAfterOom(const JobRecord& job, const std::string& first) {
    Append(job.log_path, first);
    EndJob(job, "1\n");
    JobRecord now;
    EXPECT_TRUE(WaitFor([&] {
      now = Get(job.spec.name);
      return now.spec.attempt == 2 && now.state == JobState::kRunning;
    })) << JobStateName(now.state) << " " << now.state_reason;
    return now;
  }
};

// The seed problem: `train logs -f` of an --on-oom recover job ended at
// attempt 1's OOM. A log big enough that the agent reads it over several
// calls keeps the relaunch undecided for a while after the run ended: the
// follower must wait through that, not end.
TEST_F(LogFollowerAttemptsTest, FollowsAnOomRelaunchIntoTheNextAttempt) {
  JobRecord first = StartOk(Recovering("llm"));
  std::string attempt1;
  for (int i = 0; attempt1.size() < 10 * kMiB; ++i) attempt1 += "step " + std::to_string(i) + " | loss 2.5\n";
  attempt1 += kOomLine;
  Append(first.log_path, attempt1);
  LogFollower follower = OpenFollower({.job = "llm", .follow = true, .across_attempts = true});
  FollowedAttempts out;
  StepUntil(follower, out, [&] { return !out.attempts.empty() && out.attempts[0].text.size() == attempt1.size(); });
  EndJob(first, "1\n");
  StepUntil(follower, out, [&] { return out.attempts.size() == 2; });
  ASSERT_FALSE(out.done) << "the stream ended at attempt 1's end, with the relaunch still to come";
  ASSERT_EQ(out.attempts.size(), 2u);

  JobRecord second = Get("llm");
  ASSERT_EQ(second.spec.attempt, 2u);
  Append(second.log_path, "attempt 2 | step 1\n");
  Append(second.log_path, "attempt 2 | done\n");
  EndJob(second, "0\n");
  StepUntil(follower, out, [] { return false; });
  EXPECT_TRUE(out.done);
  EXPECT_FALSE(out.error);

  EXPECT_EQ(out.attempts[0].attempt, 1u);
  EXPECT_EQ(out.attempts[0].run_id, first.run_id);
  EXPECT_TRUE(out.attempts[0].changes.empty());
  EXPECT_EQ(out.attempts[0].text, attempt1);
  EXPECT_EQ(out.attempts[1].attempt, 2u);
  EXPECT_EQ(out.attempts[1].run_id, second.run_id);
  EXPECT_NE(std::find(out.attempts[1].changes.begin(), out.attempts[1].changes.end(), "--max-anchors: 1024 -> 768"),
            out.attempts[1].changes.end());
  EXPECT_EQ(out.attempts[1].changes, second.attempts.at(0).changes);
  EXPECT_EQ(out.attempts[1].text, "attempt 2 | step 1\nattempt 2 | done\n");
}

// A slow client: the relaunch moves attempt 1's log aside and attempt 2
// writes more than the client has read of attempt 1 under the old name.
// The follower reads attempt 1's rest from where it is kept, never
// attempt 2's bytes as attempt 1's.
TEST_F(LogFollowerAttemptsTest, AFollowerBehindTheRelaunchReadsTheRestOfItsAttempt) {
  // Through the agent, and named for a client on this host: a range of
  // attempt 1's rest names the file where it is kept, never the new one.
  for (bool local : {false, true}) {
    const std::string name = local ? "slow-local" : "slow";
    JobRecord first = StartOk(Recovering(name));
    const std::string attempt1 = "a1 line one\na1 line two\n" + std::string(kOomLine);
    Append(first.log_path, attempt1);
    LogFollower follower = OpenFollower({.job = name,
                                         .follow = true,
                                         .chunk_bytes = 5,
                                         .across_attempts = true,
                                         .local_ranges = local,
                                         .local_range_bytes = 5});
    FollowedAttempts out;
    StepUntil(follower, out, [&] { return !out.attempts.empty() && out.attempts[0].text.size() == 10; });

    JobRecord second = RelaunchAfterOom(first, "");
    const std::string attempt2 = "a2 " + std::string(400, '2') + "\n";
    Append(second.log_path, attempt2);
    EndJob(second, "0\n");
    StepUntil(follower, out, [] { return false; });
    EXPECT_TRUE(out.done) << "local " << local;
    ASSERT_EQ(out.attempts.size(), 2u) << "local " << local;
    EXPECT_EQ(out.attempts[0].text, attempt1) << "local " << local;
    EXPECT_EQ(out.attempts[1].attempt, 2u);
    EXPECT_EQ(out.attempts[1].text, attempt2) << "local " << local;
  }
}

TEST_F(LogFollowerAttemptsTest, AnAttemptAskedForIsReadAloneOrFollowedOn) {
  JobRecord first = StartOk(Recovering("pick"));
  const std::string attempt1 = "first try\n" + std::string(kOomLine);
  JobRecord second = RelaunchAfterOom(first, attempt1);
  Append(second.log_path, "second try\n");

  // An earlier attempt's log is whole: without -f, it alone.
  LogFollower one = OpenFollower({.job = "pick", .attempt = 1, .across_attempts = true});
  FollowedAttempts only;
  StepUntil(one, only, [] { return false; });
  EXPECT_TRUE(only.done);
  ASSERT_EQ(only.attempts.size(), 1u);
  EXPECT_EQ(only.attempts[0].attempt, 1u);
  EXPECT_EQ(only.attempts[0].text, attempt1);

  // From an offset and a tail, in that attempt's log.
  LogFollower tail = OpenFollower({.job = "pick", .tail_lines = 1, .attempt = 1, .across_attempts = true});
  FollowedAttempts last;
  StepUntil(tail, last, [] { return false; });
  ASSERT_EQ(last.attempts.size(), 1u);
  EXPECT_EQ(last.attempts[0].text, kOomLine);

  // With -f, on into attempt 2, which still runs.
  LogFollower on =
      OpenFollower({.job = "pick", .from_offset = 6, .follow = true, .attempt = 1, .across_attempts = true});
  FollowedAttempts both;
  StepUntil(on, both, [&] { return both.attempts.size() == 2 && both.attempts[1].text == "second try\n"; });
  ASSERT_EQ(both.attempts.size(), 2u);
  EXPECT_EQ(both.attempts[0].text, attempt1.substr(6));
  EXPECT_FALSE(both.done);

  // The current one by number is the current run.
  LogFollower current = OpenFollower({.job = "pick", .attempt = 2, .across_attempts = true});
  FollowedAttempts now;
  StepUntil(current, now, [] { return false; });
  ASSERT_EQ(now.attempts.size(), 1u);
  EXPECT_EQ(now.attempts[0].run_id, second.run_id);
  EXPECT_EQ(now.attempts[0].text, "second try\n");

  for (uint32_t missing : {3u, 7u}) {
    Result<LogFollower> none = LogFollower::Open(Supervisor(), {.job = "pick", .attempt = missing});
    ASSERT_FALSE(none.ok());
    EXPECT_EQ(none.status().code(), ErrorCode::kNotFound);
    EXPECT_EQ(none.status().message(), "job 'pick' has no attempt " + std::to_string(missing) +
                                           ": its attempts are 1-2 (see gpuctl train status pick)");
  }
}

// A job that ended for good (no relaunch: it succeeded) ends the stream, and
// an older client's stream (across_attempts unset) stays as it was: no
// attempt_start, the current run's log only.
TEST_F(LogFollowerAttemptsTest, AnEndedJobEndsTheStreamAndOlderClientsSeeNoAttempts) {
  JobRecord job = StartOk(Recovering("plain"));
  Append(job.log_path, "only run\n");
  EndJob(job, "0\n");
  LogFollower across = OpenFollower({.job = "plain", .follow = true, .across_attempts = true});
  FollowedAttempts out;
  StepUntil(across, out, [] { return false; });
  EXPECT_TRUE(out.done);
  ASSERT_EQ(out.attempts.size(), 1u);
  EXPECT_EQ(out.attempts[0].text, "only run\n");

  LogFollower old = OpenFollower({.job = "plain", .follow = true});
  Result<LogStep> step = old.Next();
  ASSERT_TRUE(step.ok());
  EXPECT_FALSE(step->attempt_start.has_value());
  EXPECT_EQ(step->data, "only run\n");
}

class LogFollowerQueuedTest : public LogFollowerAttemptsTest {
 protected:
  JobSupervisor& QueueingSupervisor() {
    JobSupervisorOptions options = Options();
    sys::GpuDevice gpu;
    gpu.index = 0;
    gpu.uuid = "GPU-0";
    gpu.memory_total_bytes = 80 * kGiB;
    gpu.memory_free_bytes = 80 * kGiB;
    gpu.memory_used_bytes = 0;
    gpus_.devices.push_back(gpu);
    options.read_gpus = [this] { return gpus_; };
    // Real time: the queue's admission passes are spaced in time.
    supervisor_ = std::make_unique<JobSupervisor>(options, tmux_, procs_, runner_, real_clock_);
    supervisor_->Start();
    return *supervisor_;
  }
  sys::GpuReport gpus_;
};

TEST_F(LogFollowerQueuedTest, AQueuedJobIsWaitedForAndSaidOnce) {
  JobSupervisor& jobs = QueueingSupervisor();
  JobSpec holder_spec = Spec("holder");
  holder_spec.num_gpus = 1;
  JobRecord holder = StartOk(holder_spec);
  JobSpec waiter_spec = Spec("waiter");
  waiter_spec.num_gpus = 1;
  JobRecord waiter = StartOk(waiter_spec);
  ASSERT_EQ(waiter.state, JobState::kQueued);

  // Without follow: said, then done.
  Result<LogFollower> once = LogFollower::Open(jobs, {.job = "waiter", .across_attempts = true});
  ASSERT_TRUE(once.ok()) << once.status().message();
  FollowedAttempts told;
  StepUntil(*once, told, [] { return false; });
  EXPECT_TRUE(told.done);
  ASSERT_EQ(told.queued.size(), 1u);
  EXPECT_NE(told.queued[0].find("holder"), std::string::npos) << told.queued[0];
  EXPECT_TRUE(told.attempts.empty());

  // An older client is refused, as before.
  Result<LogFollower> old = LogFollower::Open(jobs, {.job = "waiter", .follow = true});
  ASSERT_FALSE(old.ok());
  EXPECT_EQ(old.status().code(), ErrorCode::kFailedPrecondition);

  Result<LogFollower> following = LogFollower::Open(jobs, {.job = "waiter", .follow = true, .across_attempts = true});
  ASSERT_TRUE(following.ok());
  FollowedAttempts out;
  StepUntil(*following, out, [&] { return !out.queued.empty(); });
  for (int i = 0; i < 3; ++i) {
    Result<LogStep> step = following->Next();
    ASSERT_TRUE(step.ok());
    EXPECT_EQ(step->kind, LogStep::Kind::kWait);  // said once, then waited
  }
  EndJob(holder, "0\n");
  EXPECT_EQ(Get("holder").state, JobState::kSucceeded);  // seen now: the monitor's tick is an hour
  JobRecord started;
  ASSERT_TRUE(WaitFor([&] {
    started = Get("waiter");
    return started.state == JobState::kRunning;
  }));
  Append(started.log_path, "now running\n");
  StepUntil(*following, out, [&] { return !out.attempts.empty() && out.attempts[0].text == "now running\n"; });
  ASSERT_EQ(out.queued.size(), 1u);
  ASSERT_EQ(out.attempts.size(), 1u);
  EXPECT_EQ(out.attempts[0].attempt, 1u);
  EXPECT_EQ(out.attempts[0].run_id, started.run_id);
  EXPECT_FALSE(out.done);
}

// A queued job cancelled (stopped before it ever ran) or removed while
// followed: the stream ends, and no attempt that never ran is announced.
TEST_F(LogFollowerQueuedTest, AQueuedJobStoppedOrRemovedWhileFollowedEndsTheStream) {
  JobSupervisor& jobs = QueueingSupervisor();
  JobSpec holder_spec = Spec("holder");
  holder_spec.num_gpus = 1;
  StartOk(holder_spec);
  for (const bool remove : {false, true}) {
    JobSpec waiter_spec = Spec(remove ? "removed" : "cancelled");
    waiter_spec.num_gpus = 1;
    ASSERT_EQ(StartOk(waiter_spec).state, JobState::kQueued);
    Result<LogFollower> following =
        LogFollower::Open(jobs, {.job = waiter_spec.name, .follow = true, .across_attempts = true});
    ASSERT_TRUE(following.ok()) << following.status().message();
    FollowedAttempts out;
    StepUntil(*following, out, [&] { return !out.queued.empty(); });
    ASSERT_EQ(out.queued.size(), 1u);
    ASSERT_TRUE(jobs.StopJob(waiter_spec.name, 0ms).ok());
    if (remove) {
      ASSERT_TRUE(jobs.RemoveJob(waiter_spec.name).ok());
    }
    bool ended = false;
    for (int i = 0; i < 20 && !ended; ++i) {
      Result<LogStep> step = following->Next();
      if (!step.ok()) {
        EXPECT_EQ(step.status().code(), ErrorCode::kNotFound) << step.status().message();
        ended = true;
        break;
      }
      EXPECT_FALSE(step->attempt_start.has_value()) << waiter_spec.name << ": it never ran";
      ended = step->kind == LogStep::Kind::kDone;
    }
    EXPECT_TRUE(ended) << waiter_spec.name << ": the stream must end";
  }
}

}  // namespace
}  // namespace gpuctl::train
