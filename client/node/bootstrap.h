// Bootstrap: make a node run the agent of this build, over SSH. Checks first
// that the node can run the binary (architecture, glibc) and has tmux
// (installing it with the node's package manager where it can). Uploads
// gpuctld, its config and (under systemd) its unit with SFTP, starts it
// (systemd where it runs and the install is the system one, else detached
// with a pidfile), and waits until it answers through the SSH tunnel. An
// agent of another build is replaced; when the node already runs this build
// and it answers, nothing is uploaded or restarted.
#pragma once

#include <chrono>
#include <iosfwd>
#include <memory>
#include <string>

#include "client/agent_client.h"
#include "client/node/agent_layout.h"
#include "common/status.h"

namespace gpuctl::client {

namespace ssh {
class SshSession;
}

struct BootstrapOptions {
  AgentLayout layout;        // where the agent goes (AgentLayoutFor)
  std::string gpuctld_path;  // local binary; empty: FindLocalGpuctld
  // Local config file to install; empty: deploy/gpuctld.json, installed only
  // where the node has none (a config edited on the node is kept). Given
  // explicitly, it replaces the node's and restarts the agent if different.
  std::string agent_config;
  std::chrono::milliseconds answer_deadline = std::chrono::seconds(20);
  // Install what jobs need at run time (tmux) with the node's package
  // manager; false: refuse with the command to run instead.
  bool install_missing = true;
};

struct BootstrapResult {
  std::unique_ptr<AgentClient> client;  // connected through the tunnel
  std::string build;                    // first 12 hex digits of gpuctld's SHA-256
  bool changed = false;                 // anything uploaded or (re)started
  int pid = 0;                          // the agent's pid on the node (0: unknown)
  std::string replaced_build;           // the other build that served the socket, if any
};

// Progress lines go to `progress` ("uploading gpuctld (12.3 MiB)", "started
// gpuctld (pid N)", "agent answers (build abc123)"). Errors: kNotFound (no
// local gpuctld), kIo (upload), kUnavailable (the agent did not answer by
// the deadline: the message carries the tail of its log), kFailedPrecondition
// (the node cannot run the binary, lacks tmux and it cannot be installed, or
// a remote command failed: the command's output is in the message).
Result<BootstrapResult> BootstrapAgent(std::shared_ptr<ssh::SshSession> session, const BootstrapOptions& options,
                                       std::ostream& progress);

}  // namespace gpuctl::client
