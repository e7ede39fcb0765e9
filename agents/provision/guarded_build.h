// Extension builds run as guarded jobs: in a memory cgroup of their own with a
// limit, watched by the memory guard, so a build that outgrows its budget is
// the one killed, not sshd or the agent. The plan runner waits for the end.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "agents/sys/command_runner.h"
#include "common/status.h"

namespace gpuctl::provision {

struct GuardedBuild {
  std::string name;                        // the job's name: provision-ext-flash-attn
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;
  std::string container;                   // Proxmox VMID; empty: the host
  uint64_t mem_limit_bytes = 0;            // 0: the agent's default
  std::chrono::milliseconds timeout{0};
};

class GuardedBuildRunner {
 public:
  virtual ~GuardedBuildRunner() = default;
  // Starts the build and waits for it to end. The output carries its exit
  // status and the tail of its log; a build killed by the guard or stopped
  // ends with exit_code -1 and says so in stderr_text. Errors: it could not
  // be started (name taken, no tmux...), or it did not end within timeout.
  virtual Result<sys::CommandOutput> Run(const GuardedBuild& build) = 0;
};

}  // namespace gpuctl::provision
