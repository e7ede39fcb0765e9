#include "client/node/remote_agent_commands.h"

#include <charconv>
#include <filesystem>
#include <sstream>

#include "client/ssh/shell_quote.h"

namespace gpuctl::client {
namespace {

using ssh::ShellQuote;

std::string Dir(const std::string& path) { return std::filesystem::path(path).parent_path().string(); }

// alive PID: the process exists and is not a zombie (in a container, PID 1
// may never reap the agent we started).
constexpr const char* kAliveFunction =
    "alive() { kill -0 \"$1\" 2>/dev/null && ! grep -q '^State:.*Z' /proc/\"$1\"/status 2>/dev/null; }; ";

}  // namespace

std::string ProbeCommand(const AgentLayout& layout) {
  std::string out = "b=" + ShellQuote(layout.binary) + "; c=" + ShellQuote(layout.config) +
                    "; p=" + ShellQuote(layout.pidfile) + "; " + kAliveFunction;
  out +=
      "if [ -f \"$b\" ]; then echo \"binary $(sha256sum < \"$b\" | cut -d' ' -f1)\"; else echo 'binary none'; fi; "
      "if [ -f \"$c\" ]; then echo \"config $(sha256sum < \"$c\" | cut -d' ' -f1)\"; else echo 'config none'; fi; "
      "if [ -d /run/systemd/system ]; then echo 'systemd yes'; else echo 'systemd no'; fi; "
      // The pidfile's process counts only if it runs our binary (a pid may be reused).
      "pid=$(cat \"$p\" 2>/dev/null); r=$(readlink -f \"$b\" 2>/dev/null); "
      "case \"$pid\" in ''|*[!0-9]*) echo 'running none';; "
      "*) if alive \"$pid\"; then case \"$(readlink /proc/$pid/exe 2>/dev/null)\" in "
      "\"$r\"|\"$r (deleted)\") echo \"running $pid\";; *) echo 'running none';; esac; "
      "else echo 'running none'; fi;; esac; "
      "if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet gpuctld 2>/dev/null; "
      "then echo 'active yes'; else echo 'active no'; fi";
  return out;
}

Result<RemoteAgentState> ParseRemoteAgentState(const std::string& output) {
  RemoteAgentState state;
  int seen = 0;
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    size_t space = line.find(' ');
    std::string key = line.substr(0, space);
    std::string value = space == std::string::npos ? "" : line.substr(space + 1);
    bool ok = true;
    if (key == "binary") {
      state.binary_sha256 = value == "none" ? "" : value;
    } else if (key == "config") {
      state.config_sha256 = value == "none" ? "" : value;
    } else if (key == "systemd") {
      state.systemd = value == "yes";
    } else if (key == "active") {
      state.unit_active = value == "yes";
    } else if (key == "running") {
      int pid = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), pid);
      if (value != "none") {
        ok = ec == std::errc() && end == value.data() + value.size() && pid > 0;
        if (ok) state.pid = pid;
      }
    } else {
      ok = false;
    }
    if (!ok) return Internal("unexpected line from the node's probe: '" + line + "'");
    ++seen;
  }
  if (seen != 5) return Internal("the node's probe printed " + std::to_string(seen) + " of 5 lines:\n" + output);
  return state;
}

std::string MakeDirsCommand(const AgentLayout& layout) {
  // The socket's directory is the agent's alone (0700, as systemd's
  // RuntimeDirectoryMode makes it).
  return "mkdir -p " + ShellQuote(Dir(layout.binary)) + " " + ShellQuote(Dir(layout.config)) + " " +
         ShellQuote(Dir(layout.log)) + " && mkdir -p -m 0700 " + ShellQuote(Dir(layout.socket)) + " " +
         ShellQuote(Dir(layout.pidfile));
}

std::string StopPidCommand(int pid) {
  std::string p = std::to_string(pid);
  return std::string(kAliveFunction) + "kill " + p + " 2>/dev/null; i=0; while alive " + p +
         " && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done; "
         "if alive " + p + "; then kill -9 " + p + "; sleep 0.2; fi; ! alive " + p;
}

std::string StartDetachedCommand(const AgentLayout& layout) {
  // A non-interactive shell's background job is no process group leader,
  // so setsid execs in place and $! is the agent's pid (as in deploy/install.sh).
  // Only the simple command is backgrounded (a compound one would leave a
  // subshell holding the SSH channel open, and $! would be that subshell).
  return "cd / || exit 1; setsid nohup " + ShellQuote(layout.binary) + " --config " + ShellQuote(layout.config) +
         " >>" + ShellQuote(layout.log) + " 2>&1 </dev/null & echo $! > " + ShellQuote(layout.pidfile) + " && cat " +
         ShellQuote(layout.pidfile);
}

std::string StartSystemdCommand() {
  return "systemctl daemon-reload && systemctl enable --quiet gpuctld && systemctl restart gpuctld && "
         "systemctl show -p MainPID --value gpuctld";
}

std::string ReadinessCommand(const AgentLayout& layout, int pid) {
  return std::string(kAliveFunction) + "if ! alive " + std::to_string(pid) + "; then echo dead; elif [ -S " +
         ShellQuote(layout.socket) + " ]; then echo ready; else echo starting; fi";
}

std::string LogTailCommand(const AgentLayout& layout, bool systemd) {
  if (systemd) return "journalctl -u gpuctld -n 20 --no-pager 2>&1";
  return "tail -n 20 " + ShellQuote(layout.log) + " 2>&1";
}

}  // namespace gpuctl::client
