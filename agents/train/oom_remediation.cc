#include "agents/train/oom_remediation.h"

#include <cmath>

#include "agents/train/alloc_conf.h"
#include "agents/train/anchors.h"

namespace gpuctl::train {
namespace {

constexpr std::string_view kExpandable = "expandable_segments";
constexpr uint64_t kAnchorsMultiple = 64;

std::string Describe(const std::string& conf) { return conf.empty() ? "(unset)" : conf; }

}  // namespace

bool IsFragmentation(const LogEvent& oom) {
  if (!oom.reserved_unallocated_bytes) return false;
  const uint64_t idle = *oom.reserved_unallocated_bytes;
  if (oom.tried_bytes && idle >= *oom.tried_bytes && *oom.tried_bytes > 0) return true;
  return oom.total_bytes && *oom.total_bytes > 0 && idle * 20 >= *oom.total_bytes;
}

bool HasExpandableSegments(const std::string& alloc_conf) {
  std::optional<std::string> value;
  for (const AllocConfItem& item : AllocConfItems(alloc_conf)) {
    if (item.key == kExpandable) value = item.value;
  }
  return value == "True";
}

std::string WithExpandableSegments(const std::string& alloc_conf) {
  std::string out;
  for (const AllocConfItem& item : AllocConfItems(alloc_conf)) {
    if (item.key == kExpandable) continue;
    out += item.Text() + ",";
  }
  return out + std::string(kExpandable) + ":True";
}

std::optional<uint64_t> FlagValue(const std::vector<std::string>& argv, const std::string& flag) {
  for (size_t i = 1; i < argv.size(); ++i) {
    std::string_view arg = argv[i];
    std::optional<std::string_view> value;
    if (arg == flag && i + 1 < argv.size()) value = argv[i + 1];
    if (arg.size() > flag.size() && arg.substr(0, flag.size()) == flag && arg[flag.size()] == '=') {
      value = arg.substr(flag.size() + 1);
    }
    if (!value) continue;
    Result<uint64_t> number = ParseAnchors(*value);
    return number.ok() ? std::optional<uint64_t>(*number) : std::nullopt;
  }
  return std::nullopt;
}

OomDecision DecideOomRemediation(const JobSpec& spec, const std::vector<LogEvent>& ooms) {
  OomDecision decision;
  const uint32_t relaunches_done = spec.attempt > 0 ? spec.attempt - 1 : 0;
  if (relaunches_done >= spec.oom.retries) {
    decision.reason = "the " + std::to_string(spec.oom.retries) + " OOM relaunches allowed (--oom-retries) are used";
    return decision;
  }
  // Fragmentation when every OOM that states its figures shows it: one GPU
  // that is really full needs the knobs turned down all the same.
  bool any_figures = false, all_fragmented = true;
  for (const LogEvent& oom : ooms) {
    if (!oom.reserved_unallocated_bytes) continue;
    any_figures = true;
    all_fragmented = all_fragmented && IsFragmentation(oom);
  }
  decision.fragmentation = any_figures && all_fragmented;

  if (!HasExpandableSegments(spec.alloc_conf)) {
    decision.alloc_conf = WithExpandableSegments(spec.alloc_conf);
    decision.changes.push_back("PYTORCH_CUDA_ALLOC_CONF: " + Describe(spec.alloc_conf) + " -> " + *decision.alloc_conf);
    if (decision.fragmentation) {
      decision.relaunch = true;
      decision.reason = "fragmentation: PyTorch held reserved but unallocated memory that could have served the "
                        "request; expandable segments alone should fix it";
      return decision;
    }
  }

  std::vector<std::string> stuck;
  const std::vector<std::string> argv = EffectiveCommand(spec);
  for (const OomKnob& knob : EffectiveKnobs(spec)) {
    // --anchors is the spec's own field; other knobs live only in the command.
    const bool anchors_knob = knob.flag == spec.anchors_flag && spec.anchors;
    std::optional<uint64_t> current = anchors_knob ? spec.anchors : FlagValue(argv, knob.flag);
    if (!current) {
      stuck.push_back(knob.flag + " is not in the command");
      continue;
    }
    double scaled = std::floor(static_cast<double>(*current) * knob.factor);
    uint64_t to = scaled > 0 ? static_cast<uint64_t>(scaled) : 0;
    if (knob.flag == spec.anchors_flag) to -= to % kAnchorsMultiple;
    to = std::max(to, knob.min);
    if (to >= *current) {
      stuck.push_back(knob.flag + " is at its minimum (" + std::to_string(*current) + ")");
      continue;
    }
    decision.knobs.push_back({knob.flag, *current, to});
    decision.changes.push_back(knob.flag + ": " + std::to_string(*current) + " -> " + std::to_string(to));
  }
  if (decision.changes.empty()) {
    std::string why;
    for (const std::string& s : stuck) why += (why.empty() ? "" : "; ") + s;
    decision.reason = "nothing left to turn down: expandable segments are on and " + why;
    return decision;
  }
  decision.relaunch = true;
  decision.reason = decision.fragmentation
                        ? "fragmentation, with expandable segments already on: less memory asked for"
                        : "the GPU was full: less memory asked for" +
                              std::string(decision.alloc_conf ? ", with expandable segments" : "");
  return decision;
}

JobSpec ApplyOomDecision(JobSpec spec, const OomDecision& decision) {
  if (decision.alloc_conf) spec.alloc_conf = *decision.alloc_conf;
  if (spec.command.empty() && !spec.script.empty()) spec.command = {spec.script};
  for (const KnobChange& change : decision.knobs) {
    if (change.flag == spec.anchors_flag && spec.anchors) {
      spec.anchors = change.to;
    } else {
      spec.command = ApplyAnchorsFlag(spec.command, change.to, change.flag);
    }
  }
  spec.attempt += 1;
  return spec;
}

}  // namespace gpuctl::train
