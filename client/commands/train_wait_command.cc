// gpuctl train wait NAME [--timeout D]: waits until the job has ended for
// good, then exits with the job's own result, so a script can say
// `gpuctl train wait run1 && next-step`.
#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <ostream>

#include "agents/sys/clock.h"
#include "client/commands/command_context.h"
#include "client/commands/train_subcommands.h"
#include "client/job_state_filter.h"
#include "client/multinode/multinode_commands.h"
#include "client/output/job_state.h"
#include "client/output/job_text.h"
#include "common/job_name.h"
#include "common/units.h"
#include "common/utf8.h"

namespace gpuctl::client {
namespace {

// Between looks at the job: short next to a training run, and one GetJob
// each is nothing to the agent.
constexpr std::chrono::milliseconds kWaitPoll{500};
// A connection lost while waiting (the agent restarting, an SSH hiccup) is
// retried this long before the wait gives up with exit 3.
constexpr std::chrono::minutes kWaitReconnectFor{2};

struct WaitFlags {
  std::string name;
  std::string timeout;  // not given: no limit
  bool timeout_given = false;  // --timeout "" (an unset variable) is refused, not read as no limit
};

void RunWait(CommandContext& ctx, const WaitFlags& flags) {
  if (Status s = ValidateJobName(flags.name); !s.ok()) return ctx.Fail(s);
  std::optional<std::chrono::milliseconds> limit;
  if (flags.timeout_given) {
    Result<std::chrono::milliseconds> parsed = ParseDuration(flags.timeout);
    if (!parsed.ok()) return ctx.Fail(parsed.status().Wrap("--timeout"));
    limit = *parsed;
  }
  if (!ctx.global.nodes.empty()) return ctx.Fail(InvalidArgument("train wait waits on one job: use --node NAME"));
  if (IsMultinodeJob(ctx, flags.name)) {
    return ctx.Fail(InvalidArgument("job " + flags.name +
                                    " runs on many nodes: wait for it with train start --multinode ... --wait"));
  }
  const sys::Clock& clock = sys::RealClock();
  const auto start = clock.SteadyNow();
  auto agent = ctx.ConnectAgent();
  if (!agent.ok()) return ctx.Fail(agent.status());
  // While the agent cannot be reached: since when, and whether we said so.
  std::chrono::steady_clock::time_point lost_since{};
  bool lost = false;
  bool answered = false;  // an agent never reached is exit 3 at once, not a wait
  while (true) {
    Result<v1::Job> job = (*agent)->GetJob(flags.name);
    if (job.ok()) {
      answered = true;
      if (lost) ctx.console.err << "gpuctl: reached the agent again; still waiting\n" << std::flush;
      lost = false;
      if (JobEndedForGood(*job)) {
        PrintJob(ctx, *job, JobStoppedText(*job, NowUnixMs()));
        ctx.exit_code = WaitExitCodeFor(*job);
        return;
      }
    } else if (answered && job.status().code() == ErrorCode::kNotFound) {
      // Seen, then gone: a `train rm` (or `rm --ended`) took it as it ended.
      // "No job named" would read as a typo in NAME.
      return ctx.Fail(NotFound("job " + flags.name +
                               " was removed (train rm) while waiting for it: its result is not known"));
    } else if (job.status().code() != ErrorCode::kUnavailable || !answered) {
      return ctx.Fail(job.status());
    } else {
      // The agent may be restarting: reconnect (a new SSH tunnel for --node)
      // until it answers, for a while.
      if (!lost) {
        lost = true;
        lost_since = clock.SteadyNow();
        ctx.console.err << "gpuctl: lost the agent (" << EscapeForTerminal(job.status().message())
                        << "); retrying for up to 2 minutes\n"
                        << std::flush;
      }
      if (clock.SteadyNow() - lost_since >= kWaitReconnectFor) return ctx.Fail(job.status());
      if (auto again = ctx.ConnectAgent(); again.ok()) agent = std::move(again);
    }
    if (limit && clock.SteadyNow() - start >= *limit) {
      if (job.ok()) PrintJob(ctx, *job, "");
      ctx.console.err << "gpuctl: job " << EscapeForTerminal(flags.name) << " has not ended after --timeout "
                      << EscapeForTerminal(flags.timeout)
                      << (job.ok() ? " (" + std::string(JobStateSummary(*job)) + ")" : std::string())
                      << "; it still runs\n";
      ctx.exit_code = kExitTimedOut;
      return;
    }
    std::chrono::milliseconds pause = kWaitPoll;
    if (limit) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*limit - (clock.SteadyNow() - start));
      pause = std::clamp(left, std::chrono::milliseconds(1), kWaitPoll);
    }
    sys::SleepFor(clock, pause);
  }
}

}  // namespace

int WaitExitCodeFor(const v1::Job& job) {
  // Only success is 0: a stop, a guard kill, a lost or orphaned run did not
  // produce the job's result either.
  return job.state() == v1::JOB_STATE_SUCCEEDED ? kExitOk : kExitFailure;
}

void AddTrainWaitCommand(CLI::App& train, CommandContext& context) {
  auto flags = std::make_shared<WaitFlags>();
  CLI::App* cmd = train.add_subcommand("wait", "Wait until a job has ended, then exit with its result");
  cmd->footer(
      "Waits until the job has ended for good: not while it is queued or runs, nor while a relaunch is pending "
      "(a run under --on-oom/--on-fail/--on-hang recover that failed and will be relaunched). Then prints one "
      "line, the final state and why (-o json: the job's JSON), and exits:\n"
      "  0    succeeded\n"
      "  1    failed, stopped, killed_by_guard, lost, orphaned or unreadable; or the agent knows no job NAME\n"
      "  2    bad flags or NAME\n"
      "  3    the agent cannot be reached (a connection lost while waiting is retried for 2 minutes)\n"
      "  124  --timeout ran out; the job still runs (its state goes to stderr)\n"
      "e.g. gpuctl train wait run1 --timeout 6h && gpuctl train start --name eval ...");
  cmd->add_option("name", flags->name, "The job's name")->required()->type_name("NAME");
  CLI::Option* timeout =
      cmd->add_option("--timeout", flags->timeout, "Give up after this long, e.g. 30s, 5m, 1h or seconds (exit 124)")
          ->type_name("DURATION");
  cmd->callback([&context, flags, timeout] {
    flags->timeout_given = timeout->count() > 0;
    RunWait(context, *flags);
  });
}

}  // namespace gpuctl::client
