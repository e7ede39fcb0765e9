// What a user asks to run: the plain form of `gpuctl train start`.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace gpuctl::train {

inline constexpr std::string_view kDefaultAnchorsFlag = "--max-anchors";

struct JobSpec {
  std::string name;
  std::vector<std::string> command;  // argv; with a script: {script, args...}
  std::string script;                // set when started with --script
  std::optional<uint64_t> anchors;
  std::string anchors_flag = std::string(kDefaultAnchorsFlag);
  std::string alloc_conf;            // PYTORCH_CUDA_ALLOC_CONF, validated
  std::map<std::string, std::string> env;
  std::string cwd;
  std::string gpus;                  // CUDA_VISIBLE_DEVICES
  std::string container;             // Proxmox LXC VMID; empty: the host
  // The job's cgroup memory limit; unset: the agent's default (host total
  // minus the guard's reserve).
  std::optional<uint64_t> mem_limit_bytes;
};

// [A-Za-z0-9._-]{1,64}, not "." or "..": names become file and tmux names.
Status ValidateJobName(std::string_view name);

// Everything that can be checked without touching the system: the name, a
// command or a script (not both), anchors > 0, the alloc conf grammar, env
// keys, cwd absolute, gpus a list of indices or GPU UUIDs, VMID numeric.
// The message says what was wrong and how to fix it.
Status ValidateJobSpec(const JobSpec& spec);

// The argv that runs: the command (or script), with --anchors applied.
std::vector<std::string> EffectiveCommand(const JobSpec& spec);

// The environment the job gets on top of the agent's: the user's --env, then
// PYTORCH_CUDA_ALLOC_CONF, CUDA_VISIBLE_DEVICES, GPUCTL_JOB, GPUCTL_ANCHORS,
// and PYTHONUNBUFFERED=1 unless the user set it (so the log, and with it OOM
// detection, is not 8 KiB behind).
std::map<std::string, std::string> EffectiveEnv(const JobSpec& spec);

// The tmux session of a job: "gpuctl-" + name.
std::string TmuxSessionName(std::string_view job_name);

}  // namespace gpuctl::train
