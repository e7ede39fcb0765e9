// gpuctl train start --name NAME [--script PATH | -- COMMAND ARGS...] [flags]
#include <memory>
#include <ostream>

#include "agents/sys/paths.h"
#include "client/agent_address.h"
#include "client/commands/command_context.h"
#include "client/commands/train_subcommands.h"
#include "client/multinode/multinode_commands.h"
#include "client/output/job_text.h"
#include "client/train_start_request.h"
#include "common/job_rules.h"

namespace gpuctl::client {
namespace {

void RunStart(CommandContext& ctx, const TrainStartFlags& flags, const MultinodeFlags& multinode) {
  if (!multinode.nodes.empty()) return RunMultinodeStart(ctx, flags, multinode);
  if (multinode.wait) return ctx.Fail(InvalidArgument("--wait supervises a --multinode job; give --multinode a,b"));
  if (Status s = CheckCommandAfterSeparator(ctx.args, flags.command); !s.ok()) return ctx.Fail(s);
  Result<std::string> client_cwd = LocalJobCwd(ctx, flags.container);
  if (!client_cwd.ok()) return ctx.Fail(client_cwd.status());
  Result<v1::StartJobRequest> request = BuildStartJobRequest(flags, *client_cwd);
  if (!request.ok()) return ctx.Fail(request.status());
  auto agent = ctx.ConnectAgent();
  if (!agent.ok()) return ctx.Fail(agent.status());
  // A start replaces an ended job of the same name (keeping one old log):
  // said, not done silently. Asked first, since the answer to the start
  // is the new run.
  std::string replaced;
  if (Result<v1::Job> existing = (*agent)->GetJob(flags.name); existing.ok()) {
    replaced = JobReplacedText(*existing, NowUnixMs());
  }
  Result<v1::Job> job = (*agent)->StartJob(*request);
  if (!job.ok()) return ctx.Fail(job.status().Wrap("starting job " + flags.name));
  if (!replaced.empty() && ctx.global.format() == OutputFormat::kJson) {
    ctx.console.err << replaced;  // stdout stays one JSON document
  } else if (!replaced.empty()) {
    ctx.console.out << replaced;
  }
  // The hints reach the same agent: --node N or --agent A as given.
  std::string agent_flag = !ctx.global.node.empty()    ? "--node " + ctx.global.node + " "
                           : !ctx.global.agent.empty() ? "--agent " + ctx.global.agent + " "
                                                       : "";
  PrintJob(ctx, *job, JobStartedText(*job, agent_flag));
}

}  // namespace

Result<std::string> LocalJobCwd(CommandContext& ctx, const std::string& container) {
  // This directory is the job's only when the job runs on this host: a
  // local agent (unix socket), not --node, not a TCP agent, not --container.
  std::string address = ChooseAgentAddress(ctx.global.agent, ctx.env_agent);
  bool job_runs_here = ctx.global.node.empty() && container.empty() && IsUnixSocketAddress(address);
  if (!job_runs_here) return std::string();
  return sys::CurrentDirectory();
}

void AddTrainStartCommand(CLI::App& train, CommandContext& context) {
  auto flags = std::make_shared<TrainStartFlags>();
  auto multinode = std::make_shared<MultinodeFlags>();
  CLI::App* cmd = train.add_subcommand("start", "Start a training job detached in tmux on the agent's host");
  cmd->footer(
      "Two forms:\n"
      "  gpuctl train start --name NAME --script PATH\n"
      "  gpuctl train start --name NAME [flags] -- COMMAND ARGS...\n"
      "Everything after '--' is the job's argv, passed verbatim (no shell), e.g.\n"
      "  gpuctl train start --name dflash-768 --anchors 768 -- python3 train.py --lr 3e-4\n"
      "One job across nodes, torchrun on each (its rendezvous on the first node):\n"
      "  gpuctl train start --name big --multinode a,b --nproc-per-node 8 --torchrun /opt/venv/bin/torchrun \\\n"
      "    --cwd /srv/run -- train.py --lr 3e-4\n"
      "Returns once the job runs. Exit 2 when a flag is wrong or the agent refuses the job (bad spec, "
      "name in use, container stopped): nothing was started; 3 when the agent cannot be reached.");
  cmd->add_option("--name", flags->name,
                  "Job name, 1-64 of A-Z a-z 0-9 . _ - ; names the log directory and the tmux session gpuctl-NAME")
      ->required()
      ->type_name("NAME");
  cmd->add_option("--script", flags->script,
                  "Executable to run instead of a command after '--'; made absolute against this directory. "
                  "The agent checks that it exists and is executable")
      ->type_name("PATH");
  cmd->add_option("--anchors", flags->anchors,
                  "Appends --max-anchors N to the command (replacing one already there) and sets "
                  "GPUCTL_ANCHORS=N; N a positive integer")
      ->type_name("N");
  cmd->add_option("--anchors-flag", flags->anchors_flag,
                  "The flag --anchors sets in the command (default " + std::string(kDefaultAnchorsFlag) + ")")
      ->type_name("FLAG");
  cmd->add_option("--alloc-conf", flags->alloc_conf,
                  "PYTORCH_CUDA_ALLOC_CONF for the job, checked before launch, e.g. expandable_segments:True")
      ->type_name("CONF");
  cmd->add_option("--env", flags->env,
                  "KEY=VALUE added to the job's environment; repeat for more (a repeated KEY: the last wins)")
      ->allow_extra_args(false)
      ->type_name("KEY=VALUE");
  cmd->add_option("--cwd", flags->cwd,
                  "Working directory of the job (default: the current directory for a local agent; the agent "
                  "user's home for --node and TCP agents)")
      ->type_name("DIR");
  cmd->add_option("--gpus", flags->gpus,
                  "CUDA_VISIBLE_DEVICES for the job: GPU indices or UUIDs, e.g. 0,1 (default: all); where the agent "
                  "sees the GPUs, the job waits, queued, until these are free")
      ->type_name("LIST");
  cmd->add_option("--container", flags->container,
                  "Proxmox LXC VMID to run the job in (the agent on the host runs it via pct); default: the host")
      ->type_name("VMID");
  cmd->add_option("--mem-limit", flags->mem_limit,
                  "Memory limit of the job's cgroup, e.g. 64G (default: the guard domain's total less half the reserve)")
      ->type_name("SIZE");
  cmd->add_option("--num-gpus", flags->num_gpus,
                  "Run on N GPUs the agent chooses (free ones, in PCI bus order; CUDA_VISIBLE_DEVICES is set); "
                  "the job waits, queued, until N are free")
      ->type_name("N");
  cmd->add_option("--gpu-mem", flags->gpu_mem, "At least this much free memory on each GPU, e.g. 40G")
      ->type_name("SIZE");
  cmd->add_option("--priority", flags->priority,
                  "Place in the GPU queue: higher goes first, then first come first served (default 0)")
      ->type_name("N");
  cmd->add_option("--on-oom", flags->on_oom,
                  "What a run that dies of CUDA OOM gets: fail (default) or recover: relaunched as a new run with "
                  "expandable_segments:True and/or its knobs turned down, keeping its GPUs (events "
                  "oom_remediation, oom_gave_up, oom_remediation_held)")
      ->check(CLI::IsMember({"fail", "recover"}))
      ->type_name("fail|recover");
  cmd->add_option("--oom-retries", flags->oom_retries,
                  "OOM relaunches at most (default " + std::to_string(kDefaultOomRetries) + ")")
      ->type_name("N");
  cmd->add_option("--oom-knob", flags->oom_knobs,
                  "A flag of the command to scale down after a CUDA OOM, FLAG[:FACTOR[:MIN]]; repeatable (default: "
                  "the anchors flag, 0.75, 64: 1024 -> 768, rounded down to a multiple of 64)")
      ->allow_extra_args(false)
      ->type_name("FLAG[:FACTOR[:MIN]]");
  cmd->add_option("--retry-arg", flags->retry_args,
                  "An argument added to the command on every OOM relaunch, e.g. --retry-arg=--resume-from "
                  "--retry-arg=latest; repeatable")
      ->allow_extra_args(false)
      ->type_name("ARG");
  cmd->add_option("--on-hang", flags->on_hang,
                  "What a run that stops making progress gets: dump (default: its stacks are dumped, job_hung is "
                  "published, it keeps running), fail (dumped, then stopped: failed) or recover (dumped, stopped and "
                  "relaunched from its last complete checkpoint). Progress: a new step, a log line that is not a "
                  "repeat, the checkpoint directory growing, or CPU time rising")
      ->check(CLI::IsMember({"dump", "fail", "recover"}))
      ->type_name("dump|fail|recover");
  cmd->add_option("--hang-after", flags->hang_after,
                  "No progress this long after the first step is a hang, e.g. 20m (default: learned, max(4 x the "
                  "p99 interval between steps, 60s))")
      ->type_name("DURATION");
  cmd->add_option("--start-timeout", flags->start_timeout,
                  "No progress this long before the first step is a hang (default 30m)")
      ->type_name("DURATION");
  cmd->add_option("--checkpoint-dir", flags->checkpoint_dir,
                  "Where the job writes checkpoints: a relaunch (OOM, hang, --on-fail recover) resumes from the newest "
                  "complete one here (HF checkpoint-N with trainer_state.json, DCP with .metadata, DeepSpeed's "
                  "latest, a --checkpoint-complete marker, or a file nothing writes that has not changed for 30s)")
      ->type_name("DIR");
  cmd->add_option("--resume-arg", flags->resume_arg,
                  "Added to a relaunch's command with {checkpoint} replaced by the checkpoint's path, split at "
                  "spaces, e.g. --resume-arg '--resume_from_checkpoint={checkpoint}' (GPUCTL_RESUME_FROM is set too)")
      ->type_name("TEMPLATE");
  cmd->add_option("--checkpoint-complete", flags->checkpoint_complete,
                  "A file name that, inside a checkpoint directory, says it is complete (written last by the job)")
      ->type_name("FILE");
  cmd->add_option("--on-fail", flags->on_fail,
                  "What a run that fails any other way (an NCCL error, a signal; not a CUDA OOM, not a stop) gets: "
                  "fail (default) or recover: relaunched from its last complete checkpoint (event job_relaunched)")
      ->check(CLI::IsMember({"fail", "recover"}))
      ->type_name("fail|recover");
  cmd->add_option("--on-gpu-fault", flags->on_gpu_fault,
                  "What a run on a GPU that faults (and is drained) gets: fail (default: stopped, failed) or "
                  "recover: relaunched from its last complete checkpoint on healthy GPUs, queued if there are not "
                  "enough")
      ->check(CLI::IsMember({"fail", "recover"}))
      ->type_name("fail|recover");
  cmd->add_option("--max-restarts-without-progress", flags->max_restarts_without_progress,
                  "Give up (event job_gave_up) after N relaunches in a row that left no newer checkpoint (default " +
                      std::to_string(kDefaultMaxRestartsWithoutProgress) + ")")
      ->type_name("N");
  cmd->add_option("--multinode", multinode->nodes,
                  "Run one job across these nodes (gpuctl node add), in rank order: each node's agent runs a part, "
                  "torchrun with the c10d rendezvous on the first node; train status|logs|stop|rm NAME then reach "
                  "every part")
      ->type_name("NODE,NODE");
  cmd->add_option("--nproc-per-node", multinode->nproc_per_node, "--multinode: torchrun's workers per node (e.g. GPUs)")
      ->capture_default_str()
      ->type_name("N");
  cmd->add_option("--rdzv-port", multinode->rdzv_port, "--multinode: the rendezvous port on the first node")
      ->capture_default_str()
      ->type_name("PORT");
  cmd->add_option("--rdzv-host", multinode->rdzv_host,
                  "--multinode: the first node's address as the others reach it (default: its nodes.json host)")
      ->type_name("ADDR");
  cmd->add_option("--torchrun", multinode->torchrun, "--multinode: the torchrun on the nodes, e.g. /opt/venv/bin/torchrun")
      ->capture_default_str()
      ->type_name("PATH");
  cmd->add_flag("--wait", multinode->wait,
                "--multinode: stay and supervise until every part ends; a part that fails is named, and the others "
                "are stopped after --grace. Exit 0 only when every part succeeded");
  cmd->add_option("--grace", multinode->grace, "--wait: how long the other parts get after one fails")
      ->capture_default_str()
      ->type_name("DURATION");
  cmd->add_option("command", flags->command, "After '--': the command to run and its arguments, verbatim")
      ->type_name("COMMAND");
  cmd->callback([&context, flags, multinode] { RunStart(context, *flags, *multinode); });
}

}  // namespace gpuctl::client
