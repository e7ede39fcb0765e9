// gpuctl build [--name N] [--cwd DIR] [--env K=V]... [--mem-budget SIZE]
//              [--cpus N] [--archs 9.0,10.0] [--wait] -- COMMAND ARGS...
#include "client/commands/build_command.h"

#include <chrono>
#include <memory>
#include <ostream>

#include "agents/sys/clock.h"
#include "client/agent_client.h"
#include "client/build_request.h"
#include "client/commands/command_context.h"
#include "client/commands/train_subcommands.h"
#include "client/output/job_text.h"

namespace gpuctl::client {
namespace {

// The default name is the second the build starts; another build may hold
// it (two started in the same second), so the first of NAME, NAME-2, NAME-3
// ... that no job has is taken. A name taken between the look and the start
// (a race with another client) is refused by the agent: the next one is tried.
Result<v1::Job> StartUnderAFreeName(AgentClient& agent, v1::StartJobRequest request, const std::string& base) {
  constexpr int kTries = 20;
  Status last = Status::Ok();
  for (int n = 1; n <= kTries; ++n) {
    const std::string name = n == 1 ? base : base + "-" + std::to_string(n);
    if (agent.GetJob(name).ok()) continue;  // taken, perhaps by an ended build: never replaced
    request.mutable_spec()->set_name(name);
    Result<v1::Job> job = agent.StartJob(request);
    if (job.ok() || job.status().code() != ErrorCode::kAlreadyExists) return job;
    last = job.status();
  }
  return last;
}

void RunBuild(CommandContext& ctx, BuildFlags flags) {
  if (Status s = CheckCommandAfterSeparator(ctx.args, flags.job.command); !s.ok()) return ctx.Fail(s);
  const bool default_name = flags.job.name.empty();
  if (default_name) flags.job.name = DefaultBuildName(NowUnixMs());
  Result<std::string> client_cwd = LocalJobCwd(ctx, flags.job.container);
  if (!client_cwd.ok()) return ctx.Fail(client_cwd.status());
  Result<v1::StartJobRequest> request = BuildBuildJobRequest(flags, *client_cwd);
  if (!request.ok()) return ctx.Fail(request.status());
  auto agent = ctx.ConnectAgent();
  if (!agent.ok()) return ctx.Fail(agent.status());
  Result<v1::Job> job =
      default_name ? StartUnderAFreeName(**agent, *request, flags.job.name) : (*agent)->StartJob(*request);
  if (!job.ok()) return ctx.Fail(job.status().Wrap("starting build " + flags.job.name));
  flags.job.name = job->spec().name();
  if (!flags.wait) {
    std::string agent_flag = ctx.global.agent.empty() ? "" : "--agent " + ctx.global.agent + " ";
    PrintJob(ctx, *job, JobStartedText(*job, agent_flag));
    return;
  }
  // --wait: the build's output as it comes, then its end.
  v1::StreamLogsRequest follow;
  follow.set_name(flags.job.name);
  follow.set_follow(true);
  if (Status s = WriteJobLog(ctx, **agent, follow); !s.ok()) return ctx.Fail(s);
  // The governor settles a build's figures at its next tick (250 ms).
  Result<v1::Job> ended = (*agent)->GetJob(flags.job.name);
  for (int i = 0; i < 8 && ended.ok() && ended->build().running() > 0; ++i) {
    sys::SleepFor(sys::RealClock(), std::chrono::milliseconds(250));
    ended = (*agent)->GetJob(flags.job.name);
  }
  if (!ended.ok()) return ctx.Fail(ended.status());
  if (ended->state() != v1::JOB_STATE_SUCCEEDED) {
    std::string why = ended->build().failure().empty() ? ended->state_reason() : ended->build().failure();
    // Exit 1: the build ran and failed (2 is for what never started).
    return ctx.Fail(Status(ErrorCode::kInternal, "build " + flags.job.name + " did not succeed: " + why));
  }
  ctx.console.err << "build " << flags.job.name << " succeeded: " << ended->build().compiles_done()
                  << " compiles governed, " << ended->build().pauses() << " pauses\n";
}

}  // namespace

void AddBuildCommand(CLI::App& app, CommandContext& context) {
  auto flags = std::make_shared<BuildFlags>();
  CLI::App* cmd = app.add_subcommand(
      "build", "Run a build (pip install, setup.py, cmake, ninja, make) as a job whose compiles the agent governs");
  cmd->footer(
      "The agent sets MAX_JOBS, CMAKE_BUILD_PARALLEL_LEVEL and NVCC_THREADS for the CPUs and\n"
      "TORCH_CUDA_ARCH_LIST / FLASH_ATTN_CUDA_ARCHS for --archs or the GPUs present (your --env wins),\n"
      "runs the build in a memory cgroup limited to the budget, and pauses the youngest compiles\n"
      "(SIGSTOP) while what the running ones may still reach would not fit, resuming them as memory\n"
      "comes back. A compile that cannot fit even alone fails the build with the figures, never the host.\n"
      "  gpuctl build --name fa --archs 9.0 -- pip install flash-attn --no-build-isolation\n"
      "A build is a job: gpuctl train status|logs|stop NAME work on it.\n"
      "Exit 2 when a flag is wrong or the agent refuses (unknown arch, budget above the host's): nothing\n"
      "started; with --wait, 1 when the build fails; 3 when the agent cannot be reached.");
  cmd->add_option("--name", flags->job.name, "Job name (default build-YYYYMMDD-HHMMSS, with -2, -3 ... when a job has that name)")->type_name("NAME");
  cmd->add_option("--cwd", flags->job.cwd, "Working directory (default: the current directory for a local agent)")
      ->type_name("DIR");
  cmd->add_option("--env", flags->job.env, "KEY=VALUE added to the build's environment; repeatable")
      ->allow_extra_args(false)
      ->type_name("KEY=VALUE");
  cmd->add_option("--mem-budget", flags->mem_budget,
                  "Memory the build may use, e.g. 64G: its cgroup limit (default: memory available less the "
                  "guard's reserve)")
      ->type_name("SIZE");
  cmd->add_option("--cpus", flags->cpus, "CPUs to keep busy (default: all the agent may use)")->type_name("N");
  cmd->add_option("--archs", flags->archs,
                  "CUDA compute capabilities to build for, e.g. 9.0,10.0 (default: those of the GPUs present)")
      ->type_name("LIST");
  cmd->add_option("--container", flags->job.container, "Proxmox LXC VMID to build in (default: the host)")
      ->type_name("VMID");
  cmd->add_flag("--wait", flags->wait, "Follow the build's output until it ends; exit 1 unless it succeeded");
  cmd->add_option("command", flags->job.command, "After '--': the build command and its arguments, verbatim")
      ->type_name("COMMAND");
  cmd->callback([&context, flags] { RunBuild(context, *flags); });
}

}  // namespace gpuctl::client
