// Where a step's commands run and its files are written: this host, or a
// Proxmox container through `pct exec VMID --` (its files through its root
// filesystem as the host sees it).
#pragma once

#include <string>

#include "agents/provision/step.h"
#include "agents/sys/command_runner.h"

namespace gpuctl::provision {

class StepTarget {
 public:
  // files_root: "/" (or a test root) for the host, the container's rootfs
  // otherwise. container: empty for the host.
  StepTarget(sys::CommandRunner& runner, std::string files_root, std::string container = {},
             std::string pct = "pct");

  bool in_container() const { return !container_.empty(); }
  const std::string& container() const { return container_; }

  // The command that really runs for `action`: in a container, `pct exec
  // VMID -- env K=V... argv` (pct does not pass our environment on).
  CommandLine Resolve(const StepAction& action) const;
  // Runs a command action with `timeout` (the action's own when set).
  Result<sys::CommandOutput> Run(const StepAction& action, std::chrono::milliseconds timeout) const;
  // Shorthand for read-only checks.
  Result<sys::CommandOutput> RunCheck(std::vector<std::string> argv, std::chrono::milliseconds timeout) const;

  // Where `path` (absolute, as the target sees it) lies on this host.
  std::string HostPath(const std::string& path) const;
  // Atomic write of a file action, creating its directory.
  Status WriteFile(const StepAction& action) const;

 private:
  sys::CommandRunner& runner_;
  std::string files_root_;
  std::string container_;
  std::string pct_;
};

// "apt-get install -y nvidia-open", with env as K=V in front; arguments with
// spaces or quotes are single-quoted so the line can be pasted into a shell.
std::string FormatCommandLine(const CommandLine& command);
// The last `max_lines` lines of stdout then stderr.
std::string OutputTail(const sys::CommandOutput& output, size_t max_lines = 20);

}  // namespace gpuctl::provision
