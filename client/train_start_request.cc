#include "client/train_start_request.h"

#include "common/units.h"

#include <algorithm>
#include <cstdlib>

#include "agents/sys/paths.h"
#include "common/job_name.h"
#include "common/job_rules.h"

namespace gpuctl::client {
namespace {

// Absolute and normalised ("./a/../b" -> "/cwd/b") without touching the disk.
std::string MakeAbsolute(const std::string& path, const std::string& client_cwd) {
  return sys::LexicallyAbsolute(path, client_cwd);
}

}  // namespace

Result<std::pair<std::string, std::string>> ParseEnvAssignment(std::string_view text) {
  size_t eq = text.find('=');
  if (eq == std::string_view::npos) {
    return InvalidArgument("--env '" + std::string(text) + "' has no '=': use --env KEY=VALUE (e.g. --env WANDB_MODE=offline)");
  }
  std::string key(text.substr(0, eq));
  if (!IsEnvKey(key)) {
    return InvalidArgument("--env '" + std::string(text) +
                           "': the name must be letters, digits and _, not starting with a digit");
  }
  return std::make_pair(std::move(key), std::string(text.substr(eq + 1)));
}

std::optional<std::vector<std::string>> ArgsAfterSeparator(const std::vector<std::string>& args) {
  auto separator = std::find(args.begin(), args.end(), "--");
  if (separator == args.end()) return std::nullopt;
  return std::vector<std::string>(separator + 1, args.end());
}

// The command must come after "--" so that its own flags (--max-anchors,
// --lr) are never read as ours. CLI11 collects positionals from before "--"
// too; the raw arguments tell them apart.
Status CheckCommandAfterSeparator(const std::vector<std::string>& args, const std::vector<std::string>& command) {
  if (command.empty()) return Status::Ok();
  std::optional<std::vector<std::string>> after = ArgsAfterSeparator(args);
  if (after && *after == command) return Status::Ok();
  // The positionals in front of the "--" (all of them when there is none).
  size_t after_size = after ? after->size() : 0;
  size_t stray = command.size() > after_size ? command.size() - after_size : 0;
  std::string unexpected;
  for (size_t i = 0; i < stray; ++i) unexpected += (i ? " " : "") + command[i];
  return InvalidArgument("unexpected '" + unexpected +
                         "' before '--': the command to run goes after '--', e.g. "
                         "gpuctl train start --name NAME -- python3 train.py --lr 3e-4");
}

namespace {

Result<uint64_t> DurationFlag(const std::string& text, const char* flag) {
  Result<std::chrono::milliseconds> d = ParseDuration(text);
  if (!d.ok()) return d.status().Wrap(flag);
  if (d->count() < kMinHangAfterMs) return InvalidArgument(std::string(flag) + " must be at least 1s");
  return static_cast<uint64_t>(d->count());
}

// Hangs, failures and checkpoints (issue: training that never dies silently).
Status AddResilience(const TrainStartFlags& flags, const std::string& client_cwd, v1::JobSpec& spec) {
  Result<OnHang> on_hang = ParseOnHang(flags.on_hang);
  if (!on_hang.ok()) return on_hang.status();
  spec.set_on_hang(*on_hang == OnHang::kFail      ? v1::ON_HANG_FAIL
                   : *on_hang == OnHang::kRecover ? v1::ON_HANG_RECOVER
                                                  : v1::ON_HANG_DUMP);
  if (!flags.hang_after.empty()) {
    Result<uint64_t> ms = DurationFlag(flags.hang_after, "--hang-after");
    if (!ms.ok()) return ms.status();
    spec.set_hang_after_ms(*ms);
  }
  if (!flags.start_timeout.empty()) {
    Result<uint64_t> ms = DurationFlag(flags.start_timeout, "--start-timeout");
    if (!ms.ok()) return ms.status();
    spec.set_start_timeout_ms(*ms);
  }
  Result<OnFail> on_fail = ParseOnFail(flags.on_fail);
  if (!on_fail.ok()) return on_fail.status();
  spec.set_on_fail(*on_fail == OnFail::kRecover ? v1::ON_FAIL_RECOVER : v1::ON_FAIL_FAIL);
  Result<OnFail> on_gpu_fault = ParseOnFail(flags.on_gpu_fault);
  if (!on_gpu_fault.ok()) return InvalidArgument("--on-gpu-fault must be fail or recover, got '" + flags.on_gpu_fault + "'");
  spec.set_on_gpu_fault(*on_gpu_fault == OnFail::kRecover ? v1::ON_FAIL_RECOVER : v1::ON_FAIL_FAIL);
  if (!flags.checkpoint_dir.empty()) {
    if (client_cwd.empty() && flags.checkpoint_dir.front() != '/') {
      return InvalidArgument("--checkpoint-dir must be an absolute path here (the job runs on another host)");
    }
    spec.set_checkpoint_dir(MakeAbsolute(flags.checkpoint_dir, client_cwd));
  }
  if (!flags.resume_arg.empty()) {
    if (Status s = CheckResumeArg(flags.resume_arg); !s.ok()) return s;
    if (flags.checkpoint_dir.empty()) return InvalidArgument("--resume-arg needs --checkpoint-dir: where checkpoints are");
    spec.set_resume_arg(flags.resume_arg);
  }
  spec.set_checkpoint_complete(flags.checkpoint_complete);
  if (!flags.max_restarts_without_progress.empty()) {
    std::optional<uint64_t> n = ParseWholeNumber(flags.max_restarts_without_progress);
    if (!n || *n > kMaxRestartsWithoutProgress) {
      return InvalidArgument("--max-restarts-without-progress must be a whole number from 0 to " +
                             std::to_string(kMaxRestartsWithoutProgress) + ", got '" +
                             flags.max_restarts_without_progress + "'");
    }
    spec.set_max_restarts_without_progress(static_cast<uint32_t>(*n));
  }
  return Status::Ok();
}

}  // namespace

Result<v1::StartJobRequest> BuildStartJobRequest(const TrainStartFlags& flags, const std::string& client_cwd) {
  if (Status s = ValidateNewJobName(flags.name); !s.ok()) return s;
  if (!flags.script.empty() && !flags.command.empty()) {
    return InvalidArgument("give either --script PATH or -- COMMAND ARGS..., not both");
  }
  if (flags.script.empty() && flags.command.empty()) {
    return InvalidArgument("nothing to run: give --script PATH or -- COMMAND ARGS... "
                           "(e.g. gpuctl train start --name " + flags.name + " -- python3 train.py)");
  }
  v1::StartJobRequest request;
  v1::JobSpec& spec = *request.mutable_spec();
  spec.set_name(flags.name);
  for (const auto& [flag, path] : {std::pair{"--script", &flags.script}, std::pair{"--cwd", &flags.cwd}}) {
    if (client_cwd.empty() && !path->empty() && path->front() != '/') {
      return InvalidArgument(std::string(flag) + " " + *path +
                             ": give an absolute path; the job runs on another host or in a container, "
                             "where this directory means nothing");
    }
  }
  if (!flags.script.empty()) {
    spec.set_script(MakeAbsolute(flags.script, client_cwd));
    spec.add_command(spec.script());
  } else {
    for (const std::string& arg : flags.command) spec.add_command(arg);
  }
  if (!flags.anchors.empty()) {
    Result<uint64_t> anchors = ParseAnchorsFlag(flags.anchors);
    if (!anchors.ok()) return anchors.status();
    spec.set_anchors(*anchors);
  }
  spec.set_anchors_flag(flags.anchors_flag);
  spec.set_alloc_conf(flags.alloc_conf);
  for (const std::string& assignment : flags.env) {
    Result<std::pair<std::string, std::string>> kv = ParseEnvAssignment(assignment);
    if (!kv.ok()) return kv.status();
    (*spec.mutable_env())[kv->first] = kv->second;  // a repeated KEY: the last one wins
  }
  std::string cwd = flags.cwd.empty() ? client_cwd : flags.cwd;
  if (!cwd.empty()) spec.set_cwd(MakeAbsolute(cwd, client_cwd));
  spec.set_gpus(flags.gpus);
  spec.set_container(flags.container);
  if (!flags.mem_limit.empty()) {
    Result<uint64_t> limit = ParseByteSize(flags.mem_limit);
    if (!limit.ok()) return limit.status().Wrap("--mem-limit");
    spec.set_mem_limit_bytes(*limit);
  }
  Result<OnOom> on_oom = ParseOnOom(flags.on_oom);
  if (!on_oom.ok()) return on_oom.status();
  spec.set_on_oom(flags.on_oom);  // for older agents, which read only the string
  spec.set_on_oom_policy(*on_oom == OnOom::kRecover ? v1::ON_OOM_RECOVER : v1::ON_OOM_FAIL);
  if (!flags.oom_retries.empty()) {
    Result<uint32_t> retries = ParseOomRetriesFlag(flags.oom_retries);
    if (!retries.ok()) return retries.status();
    spec.set_oom_retries(*retries);
  }
  bool remediation_flags = !flags.oom_retries.empty() || !flags.oom_knobs.empty() || !flags.retry_args.empty();
  if (remediation_flags && *on_oom != OnOom::kRecover) {
    return InvalidArgument("--oom-retries, --oom-knob and --retry-arg act only with --on-oom recover");
  }
  for (const std::string& knob : flags.oom_knobs) spec.add_oom_knobs(knob);
  for (const std::string& arg : flags.retry_args) spec.add_retry_args(arg);
  if (!flags.num_gpus.empty()) {
    Result<uint32_t> n = ParseNumGpusFlag(flags.num_gpus);
    if (!n.ok()) return n.status();
    if (!flags.gpus.empty()) return InvalidArgument("give --num-gpus N (the agent chooses) or --gpus LIST, not both");
    spec.set_num_gpus(*n);
  }
  if (!flags.gpu_mem.empty()) {
    Result<uint64_t> bytes = ParseByteSize(flags.gpu_mem);
    if (!bytes.ok()) return bytes.status().Wrap("--gpu-mem");
    spec.set_gpu_mem_bytes(*bytes);
  }
  if (!flags.priority.empty()) {
    Result<int32_t> priority = ParsePriorityFlag(flags.priority);
    if (!priority.ok()) return priority.status();
    spec.set_priority(*priority);
  }
  if (Status s = AddResilience(flags, client_cwd, spec); !s.ok()) return s;
  return request;
}

}  // namespace gpuctl::client
