#include "client/commands/health_command.h"

#include <ostream>

#include "client/commands/command_context.h"
#include "client/fleet/fleet_commands.h"
#include "client/output/health_json.h"
#include "client/output/health_text.h"
#include "common/units.h"
#include "common/json_text.h"

namespace gpuctl::client {
namespace {

struct HealthFlags {
  bool watch = false;
  std::string interval = "1s";
  int count = 0;  // 0: until interrupted
};

void Print(CommandContext& ctx, const v1::HealthSnapshot& snapshot, bool watching) {
  if (ctx.global.format() == OutputFormat::kJson) {
    // One object per line: --watch output is newline-delimited JSON.
    ctx.console.out << DumpJson(HealthToJson(snapshot), -1) << "\n";
  } else {
    if (watching && ctx.console.stdout_is_terminal) ctx.console.out << "\033[H\033[2J";
    ctx.console.out << HealthToText(snapshot);
    if (watching && !ctx.console.stdout_is_terminal) ctx.console.out << "\n";
  }
  ctx.console.out.flush();
}

void RunHealth(CommandContext& ctx, HealthFlags flags) {
  // --count N is a watch of N snapshots: never one snapshot in silence.
  if (flags.count > 0) flags.watch = true;
  Result<std::chrono::milliseconds> interval = ParseDuration(flags.interval);
  if (!interval.ok()) return ctx.Fail(interval.status().Wrap("--interval"));
  if (*interval < std::chrono::milliseconds(100) || *interval > std::chrono::hours(24)) {
    return ctx.Fail(InvalidArgument("--interval must be from 100ms to 24h, got " + flags.interval));
  }
  if (!ctx.global.nodes.empty()) {
    if (flags.watch) return ctx.Fail(InvalidArgument("--watch with --nodes: use gpuctl top --nodes ..."));
    return RunFleetHealth(ctx);
  }
  auto agent = ctx.ConnectAgent();
  if (!agent.ok()) return ctx.Fail(agent.status());
  if (!flags.watch) {
    Result<v1::HealthSnapshot> snapshot = (*agent)->GetHealth();
    if (!snapshot.ok()) return ctx.Fail(snapshot.status());
    Print(ctx, *snapshot, false);
    return;
  }
  int printed = 0;
  Status s = (*agent)->WatchHealth(*interval, [&](const v1::HealthSnapshot& snapshot) {
    Print(ctx, snapshot, true);
    ++printed;
    if (flags.count > 0 && printed >= flags.count) return false;
    return static_cast<bool>(ctx.console.out);  // stop when stdout is gone (| head)
  });
  if (!s.ok()) ctx.Fail(s);
}

}  // namespace

void AddHealthCommand(CLI::App& app, CommandContext& context) {
  auto flags = std::make_shared<HealthFlags>();
  CLI::App* cmd = app.add_subcommand("health", "Show host and GPU health from the agent");
  cmd->add_flag("-w,--watch", flags->watch, "Keep printing snapshots until interrupted");
  cmd->add_option("--interval", flags->interval, "Time between snapshots with --watch (e.g. 500ms, 2s; min 100ms)")
      ->capture_default_str();
  cmd->add_option("--count", flags->count, "Print this many snapshots, --interval apart, and exit (implies --watch)")
      ->check(CLI::NonNegativeNumber);
  cmd->callback([&context, flags] { RunHealth(context, *flags); });
}

}  // namespace gpuctl::client
