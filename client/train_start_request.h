// `gpuctl train start` flags -> StartJobRequest: a pure function, so what
// reaches the agent (argv verbatim, absolute paths) is tested without one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/job_rules.h"
#include "common/status.h"
#include "gpuctl/v1/jobs.pb.h"

namespace gpuctl::client {

// The flags as typed; numbers stay strings so that "1.5" or "-5" get our
// message rather than a parser's.
struct TrainStartFlags {
  std::string name;
  std::string script;
  std::vector<std::string> command;  // everything after "--", verbatim
  std::string anchors;               // empty: not given
  std::string anchors_flag;          // empty: the agent's default, --max-anchors
  std::string alloc_conf;
  std::vector<std::string> env;      // KEY=VALUE each
  std::string cwd;                   // empty: the client's current directory
  std::string gpus;
  std::string container;
  std::string mem_limit;             // a size, e.g. 64G; empty: the agent's default
  std::string on_oom;                // fail, recover; empty: fail
  std::string oom_retries;           // empty: the agent's default, 3
  std::vector<std::string> oom_knobs;   // FLAG[:FACTOR[:MIN]], read by the agent
  std::vector<std::string> retry_args;
  std::string num_gpus;              // empty: not asked
  std::string gpu_mem;               // a size, e.g. 40G
  std::string priority;              // an integer; empty: 0
  std::string on_hang;               // dump, fail, recover; empty: dump
  std::string hang_after;            // a duration, e.g. 20m; empty: learned
  std::string start_timeout;         // a duration; empty: the agent's 30m
  std::string checkpoint_dir;
  std::string resume_arg;            // with {checkpoint}
  std::string checkpoint_complete;   // a marker file's name
  std::string on_fail;               // fail, recover; empty: fail
  std::string on_gpu_fault;          // fail, recover; empty: fail
  std::string max_restarts_without_progress;  // a count; empty: 2
};

// Checks what is cheap to check here (name, anchors, env, script xor command)
// and makes --script and --cwd absolute against `client_cwd` (lexically: the
// files may live on the agent's host, not this one; the agent checks them).
// The job runs in `client_cwd` unless --cwd says otherwise. An empty
// `client_cwd` means this directory means nothing where the job runs (an
// agent on another host, a container): relative paths are refused and the
// agent picks the directory. Errors are kInvalidArgument naming the flag.
Result<v1::StartJobRequest> BuildStartJobRequest(const TrainStartFlags& flags, const std::string& client_cwd);

// "KEY=VALUE" split at the first '='; the value may be empty or hold '='.
Result<std::pair<std::string, std::string>> ParseEnvAssignment(std::string_view text);

// The command must come after "--" so that its own flags (--max-anchors,
// --lr) are never read as ours: kInvalidArgument naming what stood before it.
// `args`: the raw arguments; `command`: what CLI11 collected as the command.
Status CheckCommandAfterSeparator(const std::vector<std::string>& args, const std::vector<std::string>& command);

// The arguments after the first "--" in `args`, or nullopt when there is none.
std::optional<std::vector<std::string>> ArgsAfterSeparator(const std::vector<std::string>& args);

}  // namespace gpuctl::client
