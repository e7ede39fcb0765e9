// gpuctl train rm NAME: forget an ended job (its record and its logs), or
// clear an unreadable record so that the name can be used again; --ended:
// every ended job.
#include <memory>
#include <ostream>

#include <nlohmann/json.hpp>

#include "client/commands/command_context.h"
#include "client/commands/train_subcommands.h"
#include "client/job_state_filter.h"
#include "client/multinode/multinode_commands.h"
#include "client/output/job_state.h"
#include "common/job_name.h"
#include "common/json_text.h"
#include "common/utf8.h"

namespace gpuctl::client {
namespace {

void RunRemove(CommandContext& ctx, const std::string& name) {
  if (Status s = ValidateJobName(name); !s.ok()) return ctx.Fail(s);
  if (IsMultinodeJob(ctx, name)) return RunMultinodeRemove(ctx, name);
  auto agent = ctx.ConnectAgent();
  if (!agent.ok()) return ctx.Fail(agent.status());
  Result<v1::RemoveJobResponse> removed = (*agent)->RemoveJob(name);
  if (!removed.ok()) return ctx.Fail(removed.status().Wrap("removing job " + name));
  if (ctx.global.format() == OutputFormat::kJson) {
    ctx.console.out << DumpJson({{"removed", removed->name()}, {"run_id", removed->run_id()}}) << "\n";
  } else {
    ctx.console.out << "removed job " << EscapeForTerminal(removed->name())
                    << (removed->run_id().empty() ? "" : " (run " + EscapeForTerminal(removed->run_id()) + ")")
                    << ": its record and logs are gone\n";
  }
}

// --ended: every job ended for good with a result, as pueue's clean. Each is
// removed by its listed run: a job started again between the list and its
// removal (even one that ended meanwhile) is refused by the agent and
// reported, not removed.
void RunRemoveEnded(CommandContext& ctx) {
  auto agent = ctx.ConnectAgent();
  if (!agent.ok()) return ctx.Fail(agent.status());
  Result<v1::ListJobsResponse> list = (*agent)->ListJobs();
  if (!list.ok()) return ctx.Fail(list.status());
  nlohmann::json removed = nlohmann::json::array();
  nlohmann::json failed = nlohmann::json::array();
  const bool json = ctx.global.json();
  for (const v1::Job& job : list->jobs()) {
    if (!JobRemovableAsEnded(job)) continue;
    Result<v1::RemoveJobResponse> gone = (*agent)->RemoveJob(job.spec().name(), job.run_id());
    if (!gone.ok()) {
      failed.push_back({{"name", job.spec().name()}, {"error", gone.status().message()}});
      if (!json) {
        ctx.console.err << "gpuctl: " << EscapeForTerminal(gone.status().Wrap("removing job " + job.spec().name()).message())
                        << "\n";
      }
      // Unreachable now: the rest would fail the same way.
      if (gone.status().code() == ErrorCode::kUnavailable) {
        ctx.exit_code = kExitUnreachable;
        break;
      }
      ctx.exit_code = kExitFailure;
      continue;
    }
    removed.push_back({{"name", gone->name()}, {"run_id", gone->run_id()}, {"state", JobStateName(job.state())}});
    if (!json) {
      ctx.console.out << "removed job " << EscapeForTerminal(gone->name()) << " (" << JobStateSummary(job) << ")\n"
                      << std::flush;
    }
  }
  if (json) {
    ctx.console.out << DumpJson({{"removed", removed}, {"failed", failed}}, -1) << "\n";
  } else if (removed.empty() && failed.empty()) {
    ctx.console.out << "no ended jobs to remove\n";
  }
  ctx.console.out.flush();
}

}  // namespace

void AddTrainRemoveCommand(CLI::App& train, CommandContext& context) {
  auto name = std::make_shared<std::string>();
  auto ended = std::make_shared<bool>(false);
  CLI::App* cmd = train.add_subcommand("rm", "Remove an ended job's record and logs, or an unreadable record");
  cmd->footer(
      "A job that may still run is refused (exit 2): stop it first with gpuctl train stop NAME.\n"
      "An unreadable record blocks its name until it is removed. Exit 1 when the agent knows no job NAME.\n"
      "--ended removes every job that has ended for good: succeeded, failed, stopped, lost, killed_by_guard "
      "(not one whose relaunch is pending; not unreadable records or orphans: remove those by name). It prints "
      "each job removed; -o json prints {\"removed\": [{name, run_id, state}], \"failed\": [{name, error}]}. "
      "Exit 0 also when there was nothing to remove; 1 when some could not be removed.");
  cmd->add_option("name", *name, "The job's name")->type_name("NAME");
  cmd->add_flag("--ended", *ended, "Remove every ended job instead of one NAME (like pueue clean)");
  cmd->callback([&context, name, ended] {
    if (*ended && !name->empty()) return context.Fail(InvalidArgument("give either NAME or --ended, not both"));
    if (*ended) return RunRemoveEnded(context);
    if (name->empty()) return context.Fail(InvalidArgument("train rm needs NAME (or --ended for every ended job)"));
    RunRemove(context, *name);
  });
}

}  // namespace gpuctl::client
