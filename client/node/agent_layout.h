// Where an agent lives on a node: the system install that deploy/install.sh
// makes, or everything under one prefix (tests, users without root).
#pragma once

#include <string>

#include "common/status.h"

namespace gpuctl::client {

struct AgentLayout {
  std::string prefix;  // empty: the system install
  std::string binary;
  std::string config;
  std::string state_dir;
  std::string socket;
  std::string pidfile;  // used when systemd does not run the agent
  std::string log;      // the same
  // systemd manages only the system install; a prefix install always runs
  // detached with a pidfile.
  bool system() const { return prefix.empty(); }
};

// Empty prefix: /usr/local/bin/gpuctld, /etc/gpuctl/gpuctld.json,
// /var/lib/gpuctl, /run/gpuctl/gpuctld.sock, /run/gpuctl/gpuctld.pid,
// /var/log/gpuctld.log. PREFIX: PREFIX/bin/gpuctld, PREFIX/etc/gpuctld.json,
// PREFIX/state, PREFIX/run/gpuctld.sock, PREFIX/run/gpuctld.pid,
// PREFIX/log/gpuctld.log. Errors: kInvalidArgument unless PREFIX is absolute.
Result<AgentLayout> AgentLayoutFor(const std::string& prefix);

}  // namespace gpuctl::client
