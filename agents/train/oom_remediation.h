// What to change after a run died of CUDA OOM, decided in one step for the
// whole job from the OOM messages of all its ranks. Pure: the supervisor
// applies the decision (a new run with the changed spec) and publishes it.
//
// The rule (the incident's fix, made routine):
//  a. Without `expandable_segments:True` in PYTORCH_CUDA_ALLOC_CONF, add it.
//     When every OOM with figures shows fragmentation, that is the whole change.
//  b. Otherwise each knob is scaled by its factor (in the same relaunch as a.),
//     rounded down to a multiple of 64 for the anchors flag and to a whole
//     number for others, never below its minimum: 1024 -> 768.
//  c. Give up when the retries are used or nothing is left to turn down.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agents/train/job_spec.h"
#include "agents/train/log_event.h"

namespace gpuctl::train {

// Fragmentation: the memory PyTorch reserved but did not use could have
// served the request (reserved-unallocated >= the failed request), or is at
// least 5% of the GPU. False when the figures are missing.
bool IsFragmentation(const LogEvent& oom);

// "expandable_segments:True" set (the last setting of the key wins).
bool HasExpandableSegments(const std::string& alloc_conf);
// The conf with expandable_segments:True (replacing a False).
std::string WithExpandableSegments(const std::string& alloc_conf);

// A flag's whole-number value in argv: "--max-anchors 1024" or
// "--max-anchors=1024" (the first occurrence); nullopt when absent or not a number.
std::optional<uint64_t> FlagValue(const std::vector<std::string>& argv, const std::string& flag);

struct KnobChange {
  std::string flag;
  uint64_t from = 0;
  uint64_t to = 0;
};

struct OomDecision {
  bool relaunch = false;   // false: give up (oom_gave_up)
  std::string reason;      // why this change, or why giving up
  bool fragmentation = false;
  std::optional<std::string> alloc_conf;  // the new conf when it changes
  std::vector<KnobChange> knobs;          // the knobs that change
  // "PYTORCH_CUDA_ALLOC_CONF: (unset) -> expandable_segments:True", "--max-anchors: 1024 -> 768"
  std::vector<std::string> changes;
};

// `spec`: the run that failed (its attempt, conf, command, anchors, policy);
// `ooms`: its cuda_oom events (all ranks).
OomDecision DecideOomRemediation(const JobSpec& spec, const std::vector<LogEvent>& ooms);

// The spec of the next attempt: the decision applied, attempt + 1. Knob
// values are set in the command (or in `anchors` for the anchors flag when
// the job was started with --anchors).
JobSpec ApplyOomDecision(JobSpec spec, const OomDecision& decision);

}  // namespace gpuctl::train
