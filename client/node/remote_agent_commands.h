// The shell commands bootstrap runs on a node over SSH, and the parser for
// what the probe prints. Every path is quoted (client/ssh/shell_quote.h);
// nothing typed by a user reaches the remote shell unquoted.
#pragma once

#include <optional>
#include <string>

#include "client/node/agent_layout.h"
#include "common/status.h"

namespace gpuctl::client {

// What the probe found on the node.
struct RemoteAgentState {
  std::string binary_sha256;  // empty: no binary installed
  std::string config_sha256;  // empty: no config
  bool systemd = false;       // systemd runs the node (/run/systemd/system)
  std::optional<int> pid;     // the pidfile's agent, alive and running our binary
  bool unit_active = false;   // systemctl is-active gpuctld
  bool running() const { return pid.has_value() || unit_active; }
};

// Prints "binary SHA|none", "config SHA|none", "systemd yes|no",
// "running PID|none", "active yes|no", one per line.
std::string ProbeCommand(const AgentLayout& layout);
// Errors: kInternal naming the line when the output is not what ProbeCommand prints.
Result<RemoteAgentState> ParseRemoteAgentState(const std::string& output);

// mkdir -p of the directories the layout needs.
std::string MakeDirsCommand(const AgentLayout& layout);
// TERM, up to 10 s, then KILL; succeeds when the process is gone.
std::string StopPidCommand(int pid);
// Starts the agent detached (setsid, nohup, stdin from /dev/null, output
// appended to the log), writes the pidfile, prints the pid.
std::string StartDetachedCommand(const AgentLayout& layout);
// daemon-reload, enable, restart; prints the unit's main pid.
std::string StartSystemdCommand();
// Prints "ready" (pid alive and socket present), "starting" or "dead".
std::string ReadinessCommand(const AgentLayout& layout, int pid);
// The last lines of the agent's log (the journal under systemd).
std::string LogTailCommand(const AgentLayout& layout, bool systemd);

}  // namespace gpuctl::client
