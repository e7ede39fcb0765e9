// gpuctl train list [--state STATE,...] [--watch]: the agent's jobs, one
// line each; with --watch redrawn in place like top until interrupted.
#include <memory>
#include <ostream>
#include <set>

#include "agents/sys/clock.h"
#include "client/commands/command_context.h"
#include "client/commands/train_subcommands.h"
#include "client/fleet/fleet_commands.h"
#include "client/job_state_filter.h"
#include "client/output/job_json.h"
#include "client/output/job_text.h"
#include "client/output/top_view.h"
#include "common/json_text.h"
#include "common/units.h"
#include "common/utf8.h"

namespace gpuctl::client {
namespace {

// One listing, filtered. Not ok: the agent did not answer (not reported
// here), or stdout is gone (kIo).
Status PrintJobListOnce(CommandContext& ctx, AgentClient& agent, const std::set<v1::JobState>& states,
                        bool repaint) {
  Result<v1::ListJobsResponse> list = agent.ListJobs();
  if (!list.ok()) return list.status();
  KeepJobsInStates(*list, states);
  int64_t now = NowUnixMs();
  std::ostream& out = ctx.console.out;
  if (ctx.global.json()) {
    out << DumpJson(JobListToJson(*list, now), -1) << "\n";
  } else if (repaint) {
    out << RepaintScreen(JobListToText(*list, now));
  } else {
    out << JobListToText(*list, now);
  }
  out.flush();
  if (!out) return Status(ErrorCode::kIo, "stdout is closed");
  return Status::Ok();
}

}  // namespace

void RunTrainList(CommandContext& ctx, const TrainListFlags& flags) {
  std::set<v1::JobState> states;
  if (flags.states_given) {
    Result<std::set<v1::JobState>> parsed = ParseJobStates(flags.states);
    if (!parsed.ok()) return ctx.Fail(parsed.status());
    states = std::move(*parsed);
  }
  Result<std::chrono::milliseconds> interval = ParseDuration(flags.interval);
  if (!interval.ok()) return ctx.Fail(interval.status().Wrap("--interval"));
  if (*interval < std::chrono::milliseconds(200) || *interval > std::chrono::hours(1)) {
    return ctx.Fail(InvalidArgument("--interval must be from 200ms to 1h, got " + flags.interval));
  }
  if (!ctx.global.nodes.empty()) {
    if (flags.watch) return ctx.Fail(InvalidArgument("--watch with --nodes: use gpuctl top --nodes ..."));
    return RunFleetJobList(ctx, states);
  }
  auto agent = ctx.ConnectAgent();
  if (!agent.ok()) return ctx.Fail(agent.status());
  if (!flags.watch) {
    if (Status listed = PrintJobListOnce(ctx, **agent, states, false); !listed.ok()) ctx.Fail(listed);
    return;
  }
  // A terminal is redrawn in place; a pipe gets each listing in turn (text
  // screens a blank line apart, JSON one object per line).
  const bool repaint = ctx.console.stdout_is_terminal && !ctx.global.json();
  bool answered = false;  // an agent never reached is exit 3 at once
  bool lost = false;
  while (true) {
    Status listed = PrintJobListOnce(ctx, **agent, states, repaint);
    if (listed.code() == ErrorCode::kIo) return;  // stdout closed: nobody watches
    if (listed.ok()) {
      if (lost) ctx.console.err << "gpuctl: reached the agent again\n" << std::flush;
      answered = true;
      lost = false;
      if (!repaint && !ctx.global.json()) ctx.console.out << "\n" << std::flush;
    } else if (listed.code() != ErrorCode::kUnavailable || !answered) {
      return ctx.Fail(listed);
    } else {
      // Watched "until interrupted": an agent restarting is waited for, as
      // top does, said once on stderr; the screen keeps its last listing.
      if (!lost) {
        const std::string& why = listed.message();  // its first line: the rest is how to start an agent
        ctx.console.err << "gpuctl: lost the agent (" << EscapeForTerminal(why.substr(0, why.find('\n')))
                        << "); still watching\n"
                        << std::flush;
      }
      lost = true;
      if (auto again = ctx.ConnectAgent(); again.ok()) agent = std::move(again);
    }
    sys::SleepFor(sys::RealClock(), *interval);
  }
}

void AddTrainListCommand(CLI::App& train, CommandContext& context) {
  auto flags = std::make_shared<TrainListFlags>();
  CLI::App* list = train.add_subcommand("list", "List the agent's jobs, one line each");
  std::string columns;
  for (const std::string& column : JobListHeader()) columns += (columns.empty() ? "" : " ") + column;
  list->footer(
      "Columns: " + columns + ". With -o json: {\"jobs\": [...]}.\n"
      "--watch redraws the list every --interval (like top) until interrupted; when stdout is not a terminal "
      "it prints each listing in turn (-o json: one object per line).");
  CLI::Option* state = list->add_option("--state", flags->states, StateFlagHelp())->type_name("STATE,...");
  list->add_flag("-w,--watch", flags->watch, "Redraw the list every --interval until interrupted");
  list->add_option("--interval", flags->interval, "With --watch: time between listings (min 200ms)")
      ->capture_default_str();
  list->callback([&context, flags, state] {
    flags->states_given = state->count() > 0;
    RunTrainList(context, *flags);
  });
}

}  // namespace gpuctl::client
