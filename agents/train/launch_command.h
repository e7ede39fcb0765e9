// How a job is started: the argv tmux runs. Pure, so the exact command is
// tested without tmux.
//
// The job runs under a fixed wrapper (`sh -c WRAPPER`), never a shell string
// built from input: the user's argv reaches the program through "$@". The
// wrapper sends stdout and stderr to the log before the program starts (no
// pipe-pane race), and writes the exit status to a file when the program
// ends, so the status survives an agent that is down at that moment. It
// traps HUP/INT/TERM (handlers, not "ignore": the program gets default
// dispositions back at exec) so that it outlives the program and records how
// it died, e.g. 143 after SIGTERM; a stop that lands before the program
// starts is recorded the same way instead of starting it. It keeps the pane's terminal open on fd 3:
// tmux closes a pane (and its server, with the last session) as soon as no
// process holds the pane's pty, even while the job still runs.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "agents/sys/tmux.h"
#include "agents/train/job_environment.h"
#include "agents/train/job_spec.h"

namespace gpuctl::train {

extern const char* const kJobWrapperScript;

// The name NCCL's flight-recorder dumps start with, in the job's directory
// (TORCH_NCCL_DEBUG_INFO_TEMP_FILE; PyTorch appends the rank).
inline constexpr std::string_view kNcclTracePrefix = "nccl_trace_rank_";
// Its pipes (TORCH_NCCL_DEBUG_INFO_PIPE_FILE): a write asks for a dump now.
inline constexpr std::string_view kNcclPipePrefix = "nccl_trace_pipe_rank_";

struct LaunchPaths {
  std::string log_path;   // as seen by the job (inside the container for LXC)
  std::string exit_path;  // likewise
  // The cgroup.procs file the wrapper moves itself into before the job
  // starts, so every process of the job is in the job's cgroup from birth.
  // Empty: no cgroup of its own. "gate:PATH" (a container build): the
  // agent places the wrapper from outside once it writes its pid to
  // PATH.pid, and answers in PATH (container_build_gate.h).
  std::string cgroup_procs;
  // Where the wrapper writes the pid of the command, which it starts in a
  // session of its own (setsid): the pane's end sends it no SIGHUP, and the
  // host signals its group (inside a container, the host's signals stop at
  // pct exec). Empty: the command runs in the wrapper's group (jobs started
  // by an agent before this).
  std::string pid_path;
};

// env [-i] K=V... sh -c WRAPPER gpuctl-job LOG EXIT CWD CGROUP_PROCS ARGV...; for a container,
// the same behind `pct exec VMID --`. -i with a whole environment
// (job_environment.h), so nothing of the tmux server's own reaches the job.
sys::TmuxSessionSpec BuildLaunch(const JobSpec& spec, const LaunchPaths& paths, const std::string& pct,
                                 const JobEnvironment& env);
// The same with EffectiveEnv(spec) on top of whatever the pane has.
sys::TmuxSessionSpec BuildLaunch(const JobSpec& spec, const LaunchPaths& paths, const std::string& pct = "pct");

}  // namespace gpuctl::train
