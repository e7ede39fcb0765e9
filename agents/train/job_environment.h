// The environment a job runs in, decided by the agent rather than inherited
// from wherever the agent (or an older tmux server) was started:
//   the agent's own environment, less the variables only the agent uses
//   (IsAgentOnlyVariable); PATH, kDefaultJobPath when the agent has none or
//   an empty one (as under a bare systemd unit); the job's --env; the
//   variables gpuctl sets (EffectiveEnv, the run id, NCCL's dump paths).
// A container job starts from pct exec's clean environment instead: the
// host's variables mean nothing inside it, so only the last two cross.
// Pure: the agent's environment is passed in, so each rule is a unit test.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "agents/train/job_spec.h"
#include "common/status.h"

namespace gpuctl::train {

using EnvMap = std::map<std::string, std::string>;

// Debian's and systemd's default PATH.
inline constexpr std::string_view kDefaultJobPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

// The agent's own: GPUCTLD_*, systemd's to the agent alone (NOTIFY_SOCKET,
// WATCHDOG_*, LISTEN_* : a job writing to them would speak for the agent),
// and TMUX/TMUX_PANE of a shell the agent was started from (the job's pane
// is another).
bool IsAgentOnlyVariable(std::string_view name);

// A variable gpuctl sets to describe one run (GPUCTL_JOB, _RUN_ID, _ATTEMPT,
// _ANCHORS, _RESUME_FROM, _MULTINODE_*, _BUILD_BUDGET): in the agent's own
// environment it describes another run (an agent started from a job's
// shell), so it is never inherited; some are set only when the run has them.
// The client's settings (GPUCTL_NODE, GPUCTL_TLS_*) are the user's and stay.
bool IsRunVariable(std::string_view name);

struct JobEnvironment {
  // Host jobs: the whole environment (started under env -i). Container
  // jobs: what is set on top of pct exec's.
  EnvMap vars;
  bool whole = true;
  // What gpuctl set, beside the agent's variables and the job's --env
  // (Job.run_env): a value the user gave the same is theirs, not listed.
  EnvMap set_by_gpuctl;
};

// `run_vars`: the run's own (GPUCTL_RUN_ID, ...), over everything else.
JobEnvironment BuildJobEnvironment(const EnvMap& agent_env, const JobSpec& spec, const EnvMap& run_vars);

// A host job's command (not a --script, not in a container) resolved as
// execvp would in the job: a name with a '/' against spec.cwd, any other on
// the job's PATH (its relative entries against spec.cwd too). Errors:
// kInvalidArgument naming the command and the PATH searched.
Status CheckCommandResolves(const JobSpec& spec, const JobEnvironment& env);

}  // namespace gpuctl::train
