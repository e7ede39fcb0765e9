// What a user asks to run: the plain form of `gpuctl train start`.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/job_name.h"
#include "common/job_rules.h"
#include "common/status.h"

namespace gpuctl::train {

// Defaults and limits: the shared rules (common/job_rules.h).
using ::gpuctl::kDefaultAnchorsFlag;

// A knob a CUDA OOM remediation turns down: `--oom-knob FLAG[:FACTOR[:MIN]]`.
struct OomKnob {
  std::string flag;     // "--max-anchors", "--batch-size"
  double factor = kDefaultOomKnobFactor;  // the new value is the old times this, rounded down
  uint64_t min = kDefaultOomKnobMin;      // never below
  bool operator==(const OomKnob&) const = default;
};

// What to do when a run ends in CUDA OOM (`--on-oom recover`), and how far.
struct OomPolicy {
  bool recover = false;  // false: `--on-oom fail`, the run just fails
  uint32_t retries = kDefaultOomRetries;  // relaunches at most
  std::vector<OomKnob> knobs;            // empty: the anchors flag, 0.75, 64
  std::vector<std::string> retry_args;   // added to the command on every relaunch
  bool operator==(const OomPolicy&) const = default;
};

// What `gpuctl build` asks of a build job; the agent turns it into the
// build's environment and memory limit (agents/build/build_spec.h).
struct BuildOptions {
  std::optional<uint64_t> mem_budget_bytes;  // unset: memory available less the guard's reserve
  uint32_t cpus = 0;                         // 0: the CPUs the agent may use
  std::vector<std::string> archs;            // compute capabilities; none: the GPUs present
  bool operator==(const BuildOptions&) const = default;
};

// When a run counts as hung, and what it then gets (hang_watch.h).
struct HangOptions {
  OnHang policy = OnHang::kDump;
  // --hang-after: no progress this long is a hang; unset: learned from the
  // steps (max(4 x p99 step interval, 60 s)).
  std::optional<int64_t> after_ms;
  int64_t start_timeout_ms = kDefaultStartTimeoutMs;  // before the first step
  bool operator==(const HangOptions&) const = default;
};

// Relaunches from the last complete checkpoint (checkpoint_finder.h): where
// the job writes them, how its command is told which one to resume from,
// and when relaunching stops helping.
struct CheckpointOptions {
  std::string dir;              // --checkpoint-dir, absolute
  std::string resume_arg;       // --resume-arg, with {checkpoint}
  std::string complete_marker;  // --checkpoint-complete: a file naming a checkpoint complete
  uint32_t max_restarts_without_progress = kDefaultMaxRestartsWithoutProgress;
  bool operator==(const CheckpointOptions&) const = default;
};

inline constexpr std::string_view kJobKindTrain = "train";
inline constexpr std::string_view kJobKindBuild = "build";

struct JobSpec {
  std::string name;
  // "train" or "build": a build's compile trees are governed live to stay
  // within its memory budget (its cgroup limit).
  std::string kind = std::string(kJobKindTrain);
  BuildOptions build;
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
  OomPolicy oom;
  HangOptions hang;
  CheckpointOptions checkpoint;
  // --on-fail recover: any other failure (an NCCL error, a signal) is
  // relaunched from the last complete checkpoint too.
  OnFail on_fail = OnFail::kFail;
  // --on-gpu-fault recover: a run on a GPU that faulted (and was drained)
  // is relaunched from its last complete checkpoint on healthy GPUs, queued
  // if there are not enough; fail: it ends failed.
  OnFail on_gpu_fault = OnFail::kFail;
  // Set by the agent on a relaunch: the checkpoint this run resumes from
  // (its command gets --resume-arg with it, its environment
  // GPUCTL_RESUME_FROM). Empty: from scratch.
  std::string resume_from;
  // The GPU queue: --num-gpus N (the agent chooses, in PCI bus order),
  // --gpu-mem (free on each), --priority (higher first). A job that asks for
  // GPUs (these, or a count) waits, queued, until they are free.
  uint32_t num_gpus = 0;
  std::optional<uint64_t> gpu_mem_bytes;
  int32_t priority = 0;
  // 1 for the run the user started, n for the (n-1)th OOM relaunch: the job
  // sees it as GPUCTL_ATTEMPT, and from 2 on its command gets the retry args.
  uint32_t attempt = 1;
  bool operator==(const JobSpec&) const = default;
};

// The knobs a remediation turns: the policy's, or the default one.
std::vector<OomKnob> EffectiveKnobs(const JobSpec& spec);
// Reads "FLAG[:FACTOR[:MIN]]" (factor in (0, 1), min a whole number >= 1).
Result<OomKnob> ParseOomKnob(std::string_view text);

// [A-Za-z0-9._-]{1,64}, not "." or "..": names become file and tmux names.
// The shared rule (common/job_name.h), by name here.
using ::gpuctl::ValidateJobName;

// Everything that can be checked without touching the system: the name, a
// command or a script (not both), anchors > 0, the alloc conf grammar, env
// keys, cwd absolute, gpus a list of indices or GPU UUIDs, VMID numeric.
// The message says what was wrong and how to fix it.
Status ValidateJobSpec(const JobSpec& spec);

// The argv that runs: the command (or script), with --anchors applied,
// from attempt 2 on the retry args appended (once), and with a checkpoint to
// resume from, --resume-arg's words with {checkpoint} replaced by it.
std::vector<std::string> EffectiveCommand(const JobSpec& spec);

// The environment the job gets on top of the agent's: the user's --env, then
// PYTORCH_CUDA_ALLOC_CONF, CUDA_VISIBLE_DEVICES, GPUCTL_JOB, GPUCTL_ANCHORS, GPUCTL_ATTEMPT,
// GPUCTL_RESUME_FROM (a relaunch's checkpoint), NCCL's flight recorder on
// (TORCH_NCCL_TRACE_BUFFER_SIZE, TORCH_NCCL_DUMP_ON_TIMEOUT; hang dumps read
// it) unless the user set those,
// and PYTHONUNBUFFERED=1 unless the user set it (so the log, and with it OOM
// detection, is not 8 KiB behind).
std::map<std::string, std::string> EffectiveEnv(const JobSpec& spec);

// The tmux session of a job: "gpuctl-" + name.
std::string TmuxSessionName(std::string_view job_name);

}  // namespace gpuctl::train
