#include "agents/provision/job_guarded_build.h"

#include "agents/sys/files.h"

namespace gpuctl::provision {
namespace {

constexpr size_t kTailBytes = 16 << 10;

std::string LogTail(train::JobSupervisor& jobs, const std::string& name) {
  auto source = jobs.GetLogSource(name);
  if (!source.ok()) return {};
  auto size = sys::RegularFileSize(source->path);
  if (!size.ok()) return {};
  uint64_t from = *size > kTailBytes ? *size - kTailBytes : 0;
  return sys::ReadRegularFileRange(source->path, from, kTailBytes).value_or("");
}

}  // namespace

JobGuardedBuildRunner::JobGuardedBuildRunner(train::JobSupervisor& jobs, const sys::Clock& clock,
                                             std::chrono::milliseconds poll)
    : jobs_(jobs), clock_(clock), poll_(poll) {}

Result<sys::CommandOutput> JobGuardedBuildRunner::Run(const GuardedBuild& build) {
  train::JobSpec spec;
  spec.name = build.name;
  spec.command = build.argv;
  spec.env = build.env;
  spec.container = build.container;
  // A build job: the agent's live governor keeps its compiles inside the
  // limit (agents/build/build_watch.h).
  spec.kind = std::string(train::kJobKindBuild);
  if (build.mem_limit_bytes > 0) {
    spec.mem_limit_bytes = build.mem_limit_bytes;
    spec.build.mem_budget_bytes = build.mem_limit_bytes;
  }
  auto started = jobs_.StartJob(spec);
  if (!started.ok()) return started.status().Wrap("starting the build as job '" + build.name + "'");

  // Builds take minutes to hours; a poll every half second costs nothing.
  const auto deadline = clock_.SteadyNow() + build.timeout;
  for (;;) {
    auto job = jobs_.GetJob(build.name);
    if (!job.ok()) return job.status();
    if (!train::IsActive(job->state)) {
      sys::CommandOutput output;
      output.exit_code = job->exit_code.value_or(-1);
      output.term_signal = job->term_signal.value_or(0);
      output.stdout_text = LogTail(jobs_, build.name);
      if (job->state == train::JobState::kFailed && !job->state_reason.empty()) {
        output.stderr_text = "build job '" + build.name + "' failed: " + job->state_reason;
      } else if (job->state != train::JobState::kSucceeded && job->state != train::JobState::kFailed) {
        output.stderr_text = "build job '" + build.name + "' ended " + train::JobStateName(job->state) +
                             (job->state_reason.empty() ? "" : ": " + job->state_reason);
        if (output.exit_code == 0) output.exit_code = -1;
      }
      return output;
    }
    if (build.timeout.count() > 0 && clock_.SteadyNow() > deadline) {
      (void)jobs_.StopJob(build.name, std::chrono::seconds(30));
      return Unavailable("build job '" + build.name + "' did not finish within " +
                         std::to_string(std::chrono::duration_cast<std::chrono::minutes>(build.timeout).count()) +
                         " min and was stopped");
    }
    sys::SleepFor(clock_, poll_);
  }
}

}  // namespace gpuctl::provision
