#include "agents/train/job_spec.h"

#include <algorithm>
#include <cstdlib>

#include "agents/sys/text_fields.h"
#include "agents/train/alloc_conf.h"
#include "agents/train/anchors.h"
#include "common/job_name.h"
#include "common/job_rules.h"

namespace gpuctl::train {
namespace {

// "0,1,3" or "GPU-c6489789-...,GPU-..." (what CUDA_VISIBLE_DEVICES accepts).
bool IsGpuList(std::string_view gpus) {
  if (gpus.empty() || gpus.front() == ',' || gpus.back() == ',') return false;
  for (char c : gpus) {
    bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'Z') || c == '-' || c == ',';
    if (!ok) return false;
  }
  return gpus.find(",,") == std::string_view::npos;
}

}  // namespace

Status ValidateJobSpec(const JobSpec& spec) {
  if (Status s = ValidateNewJobName(spec.name); !s.ok()) return s;
  if (!spec.script.empty() && !spec.command.empty() && spec.command.front() != spec.script) {
    return InvalidArgument("give either --script PATH or -- COMMAND ARGS..., not both");
  }
  if (spec.script.empty() && spec.command.empty()) {
    return InvalidArgument("nothing to run: give --script PATH or -- COMMAND ARGS...");
  }
  if (!spec.script.empty() && spec.script.front() != '/') {
    return InvalidArgument("--script must be an absolute path, got '" + spec.script + "'");
  }
  if (!spec.command.empty() && spec.command.front().empty()) {
    return InvalidArgument("the command to run is empty: give one after '--', e.g. -- python3 train.py");
  }
  if (spec.anchors && *spec.anchors == 0) {
    return InvalidArgument("--anchors must be a positive integer, got 0");
  }
  if (Status s = CheckOomRetries(spec.oom.retries); !s.ok()) return s;
  if (spec.num_gpus > 0 && !spec.gpus.empty()) {
    return InvalidArgument("give --num-gpus N (the agent chooses) or --gpus LIST (these GPUs), not both");
  }
  if (Status s = CheckNumGpus(spec.num_gpus); !s.ok()) return s;
  for (const OomKnob& knob : spec.oom.knobs) {
    if (knob.flag.size() < 2 || knob.flag[0] != '-' || !(knob.factor > 0 && knob.factor < 1) || knob.min == 0) {
      return InvalidArgument("--oom-knob '" + knob.flag + "': give FLAG[:FACTOR[:MIN]] with FACTOR in (0, 1), MIN >= 1");
    }
  }
  if (spec.anchors && (spec.anchors_flag.size() < 2 || spec.anchors_flag[0] != '-')) {
    return InvalidArgument("--anchors-flag must look like a flag (e.g. --max-anchors), got '" + spec.anchors_flag + "'");
  }
  if (!spec.alloc_conf.empty()) {
    if (Status s = ValidateAllocConf(spec.alloc_conf); !s.ok()) return s.Wrap("--alloc-conf");
  }
  for (const auto& [key, value] : spec.env) {
    if (!IsEnvKey(key)) {
      return InvalidArgument("--env " + key + "=...: the name must be letters, digits and _ (not starting with a digit)");
    }
  }
  if (!spec.cwd.empty() && spec.cwd.front() != '/') {
    return InvalidArgument("--cwd must be an absolute path, got '" + spec.cwd + "'");
  }
  if (!spec.gpus.empty() && !IsGpuList(spec.gpus)) {
    return InvalidArgument("--gpus must be a comma-separated list of GPU indices or UUIDs (e.g. 0,1), got '" +
                           spec.gpus + "'");
  }
  if (spec.mem_limit_bytes && *spec.mem_limit_bytes < kMinMemLimitBytes) {
    return InvalidArgument("--mem-limit must be at least 16MiB (e.g. --mem-limit 64G)");
  }
  if (spec.hang.after_ms && *spec.hang.after_ms < kMinHangAfterMs) {
    return InvalidArgument("--hang-after must be at least 1s (e.g. --hang-after 20m)");
  }
  if (spec.hang.start_timeout_ms < kMinHangAfterMs) {
    return InvalidArgument("--start-timeout must be at least 1s (e.g. --start-timeout 30m)");
  }
  const CheckpointOptions& ckpt = spec.checkpoint;
  if (!ckpt.dir.empty() && ckpt.dir.front() != '/') {
    return InvalidArgument("--checkpoint-dir must be an absolute path, got '" + ckpt.dir + "'");
  }
  if (!ckpt.resume_arg.empty()) {
    if (Status s = CheckResumeArg(ckpt.resume_arg); !s.ok()) return s;
    if (ckpt.dir.empty()) return InvalidArgument("--resume-arg needs --checkpoint-dir: where to look for checkpoints");
  }
  if (!ckpt.complete_marker.empty() &&
      (ckpt.complete_marker.find('/') != std::string::npos || ckpt.complete_marker == "." ||
       ckpt.complete_marker == "..")) {
    return InvalidArgument("--checkpoint-complete must be a file name (the marker inside a checkpoint), got '" +
                           ckpt.complete_marker + "'");
  }
  if (ckpt.max_restarts_without_progress > kMaxRestartsWithoutProgress) {
    return InvalidArgument("--max-restarts-without-progress must be at most " +
                           std::to_string(kMaxRestartsWithoutProgress));
  }
  if (!spec.resume_from.empty()) {
    const std::string& dir = ckpt.dir;
    bool under = !dir.empty() && spec.resume_from.size() > dir.size() &&
                 spec.resume_from.compare(0, dir.size(), dir) == 0 &&
                 (dir.back() == '/' || spec.resume_from[dir.size()] == '/') &&
                 spec.resume_from.find("/../") == std::string::npos;
    if (!under) {
      return InvalidArgument("resume_from must be a checkpoint under --checkpoint-dir, got '" + spec.resume_from + "'");
    }
  }
  if (!spec.container.empty() && spec.container.find_first_not_of("0123456789") != std::string::npos) {
    return InvalidArgument("--container must be a numeric Proxmox VMID (e.g. 200), got '" + spec.container + "'");
  }
  return Status::Ok();
}

std::vector<std::string> EffectiveCommand(const JobSpec& spec) {
  std::vector<std::string> argv = spec.command;
  if (argv.empty() && !spec.script.empty()) argv.push_back(spec.script);
  if (spec.anchors) argv = ApplyAnchorsFlag(std::move(argv), *spec.anchors, spec.anchors_flag);
  if (spec.attempt > 1 && !spec.oom.retry_args.empty()) {
    const auto& extra = spec.oom.retry_args;
    bool present = std::search(argv.begin(), argv.end(), extra.begin(), extra.end()) != argv.end();
    if (!present) argv.insert(argv.end(), extra.begin(), extra.end());
  }
  if (!spec.resume_from.empty()) {
    // --resume-arg's words, split at whitespace: "--resume {checkpoint}" is
    // two arguments, and a path with spaces, put in after, stays one.
    for (std::string_view text : sys::Words(spec.checkpoint.resume_arg)) {
      std::string word(text);
      for (size_t at = word.find(kCheckpointPlaceholder); at != std::string::npos;
           at = word.find(kCheckpointPlaceholder, at + spec.resume_from.size())) {
        word.replace(at, kCheckpointPlaceholder.size(), spec.resume_from);
      }
      argv.push_back(std::move(word));
    }
  }
  return argv;
}

std::vector<OomKnob> EffectiveKnobs(const JobSpec& spec) {
  if (!spec.oom.knobs.empty()) return spec.oom.knobs;
  OomKnob knob;  // the default factor and min
  knob.flag = spec.anchors_flag;
  return {knob};
}

Result<OomKnob> ParseOomKnob(std::string_view text) {
  auto bad = [&](std::string why) {
    return InvalidArgument("--oom-knob '" + std::string(text) + "': " + why +
                           "; give FLAG[:FACTOR[:MIN]], e.g. --max-anchors:0.75:64 or --batch-size:0.5:1");
  };
  OomKnob knob;
  size_t first = text.find(':');
  knob.flag = std::string(text.substr(0, first));
  if (knob.flag.size() < 2 || knob.flag[0] != '-' || knob.flag.find_first_of(" =\t") != std::string::npos) {
    return bad("the flag must start with '-' and have no spaces or '='");
  }
  if (first == std::string_view::npos) return knob;
  std::string_view rest = text.substr(first + 1);
  size_t second = rest.find(':');
  std::string factor(rest.substr(0, second));
  char* end = nullptr;
  double value = std::strtod(factor.c_str(), &end);
  if (factor.empty() || end != factor.c_str() + factor.size() || !(value > 0.0 && value < 1.0)) {
    return bad("the factor must be a number between 0 and 1");
  }
  knob.factor = value;
  if (second == std::string_view::npos) return knob;
  Result<uint64_t> min = ParseAnchors(rest.substr(second + 1));
  if (!min.ok()) return bad("the minimum must be a whole number of at least 1");
  knob.min = *min;
  return knob;
}

std::map<std::string, std::string> EffectiveEnv(const JobSpec& spec) {
  std::map<std::string, std::string> env = spec.env;
  if (!spec.alloc_conf.empty()) env["PYTORCH_CUDA_ALLOC_CONF"] = spec.alloc_conf;
  if (!spec.gpus.empty()) {
    env["CUDA_VISIBLE_DEVICES"] = spec.gpus;
    env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";  // CUDA's own order is fastest first, not NVML's
  }
  env["GPUCTL_JOB"] = spec.name;
  if (spec.anchors) env["GPUCTL_ANCHORS"] = std::to_string(*spec.anchors);
  env["GPUCTL_ATTEMPT"] = std::to_string(spec.attempt);
  if (!spec.resume_from.empty()) env["GPUCTL_RESUME_FROM"] = spec.resume_from;
  // NCCL's flight recorder, so a hang dump (hang_watch.h) has what each rank
  // last did in its collectives: kept in memory, written on a watchdog
  // timeout into the job's directory.
  env.try_emplace("TORCH_NCCL_TRACE_BUFFER_SIZE", "2000");
  env.try_emplace("TORCH_NCCL_DUMP_ON_TIMEOUT", "1");
  env.try_emplace("PYTHONUNBUFFERED", "1");
  return env;
}

std::string TmuxSessionName(std::string_view job_name) { return "gpuctl-" + std::string(job_name); }

}  // namespace gpuctl::train
