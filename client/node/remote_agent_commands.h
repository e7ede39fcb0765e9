// The shell commands bootstrap runs on a node over SSH, and the parser for
// what the probe prints. Every path is quoted (client/ssh/shell_quote.h);
// nothing typed by a user reaches the remote shell unquoted.
#pragma once

#include <optional>
#include <string>

#include "client/node/agent_layout.h"
#include "common/status.h"

namespace gpuctl::client {

// What the probe found on the node: the installed agent, and what the node
// is (checked before anything is uploaded).
struct RemoteAgentState {
  std::string binary_sha256;  // empty: no binary installed
  std::string config_sha256;  // empty: no config
  bool systemd = false;       // systemd runs the node (/run/systemd/system)
  std::optional<int> pid;     // the pidfile's agent, alive and running our binary
  bool unit_active = false;   // systemctl is-active gpuctld
  // The gpuctld that holds the socket's lock, whatever started it, and the
  // SHA-256 of the binary it runs (/proc/PID/exe).
  std::optional<int> serving_pid;
  std::string serving_sha256;
  std::string machine;          // uname -m
  std::string glibc;            // "2.36"; empty: no glibc (musl) or no getconf
  std::string os;               // PRETTY_NAME from os-release, for messages
  std::string tmux;             // its path; empty: not installed
  std::string package_manager;  // apt-get, dnf, yum, zypper, apk; empty: none known
  bool root = false;            // the SSH user is root
  bool running() const { return pid.has_value() || unit_active; }
};

// Prints one "KEY VALUE" line per field of RemoteAgentState: "binary
// SHA|none", "config SHA|none", "systemd yes|no", "running PID|none",
// "active yes|no", "serving PID SHA|none", "machine M", "glibc V|none",
// "os NAME", "tmux PATH|none", "packages TOOL|none", "root yes|no".
std::string ProbeCommand(const AgentLayout& layout);
// Errors: kInternal naming the line when the output is not what ProbeCommand prints.
Result<RemoteAgentState> ParseRemoteAgentState(const std::string& output);

// Installs tmux with the node's package manager, non-interactively.
// Errors: kInvalidArgument for a package manager this does not know.
Result<std::string> InstallTmuxCommand(const std::string& package_manager);

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
// Where the agent's log stands before a start: the log's size in bytes,
// or the time (seconds since the epoch) under systemd; prints a number.
std::string LogMarkCommand(const AgentLayout& layout, bool systemd);
// The last lines the agent wrote since `mark` (LogMarkCommand's number):
// this start's, not those of earlier failed ones.
std::string LogTailCommand(const AgentLayout& layout, bool systemd, uint64_t mark);

}  // namespace gpuctl::client
