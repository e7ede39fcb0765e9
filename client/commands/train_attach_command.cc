// gpuctl train attach NAME: the job's tmux session on the agent's own tmux
// server, here or (--node) on the node through ssh -t. gpuctl becomes tmux
// (or ssh): detach with the usual C-b d.
#include <memory>
#include <optional>
#include <ostream>

#include "client/agent_address.h"
#include "client/commands/command_context.h"
#include "client/commands/train_subcommands.h"
#include "client/node/agent_config.h"
#include "client/node/node_ssh.h"
#include "client/output/job_state.h"
#include "client/ssh/terminal_exec.h"
#include "common/job_name.h"

namespace gpuctl::client {
namespace {

void RunAttach(CommandContext& ctx, const std::string& name) {
  if (Status s = ValidateJobName(name); !s.ok()) return ctx.Fail(s);
  if (!ctx.global.nodes.empty()) return ctx.Fail(InvalidArgument("train attach attaches to one job: use --node NAME"));
  std::optional<Node> node;
  if (!ctx.global.node.empty()) {
    Result<Node> found = FindNode(ctx.global.node);
    if (!found.ok()) return ctx.Fail(found.status());
    node = *found;
  } else {
    std::string address = ChooseAgentAddress(ctx.global.agent, ctx.env_agent);
    if (!IsUnixSocketAddress(address)) {
      return ctx.Fail(InvalidArgument("train attach needs a terminal on the job's host: use the local agent, or "
                                      "--node NAME for another host (not --agent " + address + ")"));
    }
  }
  auto agent = ctx.ConnectAgent();
  if (!agent.ok()) return ctx.Fail(agent.status());
  Result<v1::Job> job = (*agent)->GetJob(name);
  if (!job.ok()) return ctx.Fail(job.status());
  Result<std::vector<std::string>> argv =
      TrainAttachArgv(*job, node ? &*node : nullptr, ctx.global.accept_new_host_key);
  if (!argv.ok()) return ctx.Fail(argv.status());
  (*agent).reset();  // its SSH tunnel is not needed under tmux
  ctx.console.out.flush();
  ctx.console.err.flush();
  ctx.Fail(ssh::ExecReplacingProcess(*argv));  // returns only when it could not run
}

}  // namespace

Result<std::vector<std::string>> TrainAttachArgv(const v1::Job& job, const Node* node, bool accept_new_host_key) {
  const std::string& name = job.spec().name();
  switch (job.state()) {
    case v1::JOB_STATE_STARTING:
    case v1::JOB_STATE_RUNNING:
      break;
    case v1::JOB_STATE_QUEUED:
      return Status(ErrorCode::kFailedPrecondition,
                    "job " + name + " is queued (waiting for " + job.waiting_for() +
                        "): it has no session yet; wait for it with gpuctl train logs -f " + name);
    default:
      return Status(ErrorCode::kFailedPrecondition,
                    "job " + name + " has ended (" + JobStateSummary(job) +
                        "): its tmux session is gone; read its log with gpuctl train logs " + name);
  }
  if (job.tmux_session().empty()) {
    return Status(ErrorCode::kFailedPrecondition, "job " + name + " has no tmux session (yet); try again");
  }
  // An agent older than Job.tmux_socket: the socket it would have had (a
  // prefix install's own, else the system's "gpuctl").
  std::string socket = job.tmux_socket();
  if (socket.empty()) socket = node && !node->agent_prefix.empty() ? TmuxSocketForPrefix(node->agent_prefix) : "gpuctl";
  // "=": exactly this session, never another whose name starts the same.
  std::vector<std::string> tmux = {"tmux", "-L", socket, "attach-session", "-t", "=" + job.tmux_session()};
  if (!node) return tmux;
  ssh::SshTarget target{.user = node->user, .host = node->host, .port = node->port,
                        .identity_file = node->identity_file};
  return ssh::SshTerminalArgv(target, accept_new_host_key, tmux);
}

void AddTrainAttachCommand(CLI::App& train, CommandContext& context) {
  auto name = std::make_shared<std::string>();
  CLI::App* cmd = train.add_subcommand("attach", "Attach this terminal to a running job's tmux session");
  cmd->footer(
      "Runs tmux attach on the agent's own tmux server (its --tmux-socket, which the agent reports), here or, "
      "with --node NAME, on that node through ssh -t (OpenSSH's client, your ~/.ssh/config and known_hosts). "
      "Detach with C-b d; the job runs on. Exit 2 for a job that is queued or has ended (its session is gone), "
      "1 when the agent knows no job NAME, 3 when it cannot be reached; else tmux's (or ssh's) own.");
  cmd->add_option("name", *name, "The job's name")->required()->type_name("NAME");
  cmd->callback([&context, name] { RunAttach(context, *name); });
}

}  // namespace gpuctl::client
