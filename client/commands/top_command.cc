#include "client/commands/top_command.h"

#include <algorithm>
#include <memory>
#include <ostream>
#include <set>

#include "agents/sys/clock.h"
#include "client/commands/command_context.h"
#include "client/commands/train_subcommands.h"
#include "client/fleet/fleet.h"
#include "client/job_state_filter.h"
#include "client/output/top_view.h"
#include "common/json_text.h"
#include "common/units.h"

namespace gpuctl::client {
namespace {

struct TopFlags {
  bool once = false;
  std::string interval = "2s";
  std::string states;  // --state: not given, all
  bool states_given = false;  // --state "" is refused, not read as all
};

// One refresh: health and jobs from every node, over the pool's connections.
std::vector<TopNode> Gather(NodePool& pool, int concurrency, const std::set<v1::JobState>& states) {
  std::vector<TopNode> view(pool.size());
  std::vector<NodeAnswer> answers = pool.AskAll(concurrency, [&view, &states](size_t i, AgentClient& agent) -> Status {
    Result<v1::HealthSnapshot> health = agent.GetHealth();
    if (!health.ok()) return health.status();
    view[i].health = std::move(*health);
    Result<v1::ListJobsResponse> jobs = agent.ListJobs();
    if (!jobs.ok()) return jobs.status();
    KeepJobsInStates(*jobs, states);
    view[i].jobs = std::move(*jobs);
    return Status::Ok();
  });
  for (size_t i = 0; i < view.size(); ++i) {
    view[i].node = pool.nodes()[i].name;
    view[i].reached = answers[i].reached;
    if (!answers[i].status.ok()) view[i].error = answers[i].status.message();
  }
  return view;
}

// The nodes of --nodes, or the one agent the other flags name, as a pool.
Result<Fleet> OpenTopFleet(CommandContext& ctx) {
  if (!ctx.global.nodes.empty()) return OpenFleet(ctx);
  Node one;
  one.name = ctx.global.node.empty() ? "local" : ctx.global.node;
  Fleet fleet;
  fleet.pool = std::make_unique<NodePool>(std::vector<Node>{one}, [&ctx](const Node&) { return ctx.ConnectAgent(); });
  return fleet;
}

void RunTop(CommandContext& ctx, const TopFlags& flags) {
  Result<std::chrono::milliseconds> interval = ParseDuration(flags.interval);
  if (!interval.ok()) return ctx.Fail(interval.status().Wrap("--interval"));
  if (*interval < std::chrono::milliseconds(200) || *interval > std::chrono::hours(1)) {
    return ctx.Fail(InvalidArgument("--interval must be from 200ms to 1h, got " + flags.interval));
  }
  std::set<v1::JobState> states;
  if (flags.states_given) {
    Result<std::set<v1::JobState>> parsed = ParseJobStates(flags.states);
    if (!parsed.ok()) return ctx.Fail(parsed.status());
    states = std::move(*parsed);
  }
  Result<Fleet> fleet = OpenTopFleet(ctx);
  if (!fleet.ok()) return ctx.Fail(fleet.status());
  const bool json = ctx.global.format() == OutputFormat::kJson;
  // Live only where a person watches: a pipe or a script gets one screen.
  const bool live = !flags.once && !json && ctx.console.stdout_is_terminal;
  std::ostream& out = ctx.console.out;
  while (true) {
    std::vector<TopNode> view = Gather(*fleet->pool, fleet->options.concurrency, states);
    int64_t now = NowUnixMs();
    if (json) {
      out << DumpJson(TopToJson(view, now), -1) << "\n";
    } else if (live) {
      out << RepaintScreen(TopToText(view, now));
    } else {
      out << TopToText(view, now);
    }
    out.flush();
    if (!live || !out) {
      bool all_reached = std::all_of(view.begin(), view.end(), [](const TopNode& n) { return n.reached; });
      bool all_answered = std::all_of(view.begin(), view.end(), [](const TopNode& n) { return n.error.empty(); });
      if (!all_reached) {
        ctx.exit_code = ctx.global.nodes.empty() ? kExitUnreachable : kExitSomeNodesUnreached;
      } else if (!all_answered) {
        // Reached, but what it answered was an error: not a clean screen.
        ctx.exit_code = ctx.global.nodes.empty() ? kExitFailure : kExitSomeNodesUnreached;
      }
      return;
    }
    sys::SleepFor(sys::RealClock(), *interval);
  }
}

}  // namespace

void AddTopCommand(CLI::App& app, CommandContext& context) {
  auto flags = std::make_shared<TopFlags>();
  CLI::App* cmd = app.add_subcommand("top", "A live view of nodes x GPUs and their jobs");
  cmd->footer(
      "Shows, per node, free memory and memory pressure (PSI some/full, 10 s average) and per GPU utilisation, "
      "memory, temperature and power; then every job with its state, step, loss, throughput, GPU memory and last "
      "event. With --nodes (all, NAME,NAME or @KEY=VALUE) it covers many nodes, each over one SSH connection kept "
      "for the whole session; else the agent --node or --agent names.\n"
      "On a terminal it refreshes in place until interrupted; with --once, or when stdout is not a terminal, it "
      "prints one screen. -o json prints one object: {time_unix_ms, nodes: [{node, reached, error, health, "
      "jobs}]}.\n"
      "Exit 0 when every node answered, 4 (--nodes) or 3 (one agent) when some did not.");
  cmd->add_flag("--once", flags->once, "Print one screen and exit");
  cmd->add_option("--interval", flags->interval, "Time between refreshes (e.g. 1s; min 200ms)")->capture_default_str();
  CLI::Option* state = cmd->add_option("--state", flags->states, StateFlagHelp())->type_name("STATE,...");
  cmd->callback([&context, flags, state] {
    flags->states_given = state->count() > 0;
    RunTop(context, *flags);
  });
}

}  // namespace gpuctl::client
