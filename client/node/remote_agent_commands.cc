#include "client/node/remote_agent_commands.h"

#include <algorithm>
#include <charconv>
#include <sstream>
#include <vector>

#include "agents/sys/paths.h"
#include "client/ssh/shell_quote.h"

namespace gpuctl::client {
namespace {

using ssh::ShellQuote;

// A path on the node: text only, nothing here is looked at.
std::string Dir(const std::string& path) { return sys::ParentDir(path); }

// alive PID: the process exists and is not a zombie (in a container, PID 1
// may never reap the agent we started).
constexpr const char* kAliveFunction =
    "alive() { kill -0 \"$1\" 2>/dev/null && ! grep -q '^State:.*Z' /proc/\"$1\"/status 2>/dev/null; }; ";

}  // namespace

std::string ProbeCommand(const AgentLayout& layout) {
  std::string out = "b=" + ShellQuote(layout.binary) + "; c=" + ShellQuote(layout.config) +
                    "; p=" + ShellQuote(layout.pidfile) + "; l=" + ShellQuote(layout.socket + ".lock") + "; " +
                    kAliveFunction;
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
      "then echo 'active yes'; else echo 'active no'; fi; "
      // Whoever holds the socket's lock serves it: a gpuctld of any build,
      // started by systemd, by hand or by an older bootstrap.
      "s=$(head -c 20 \"$l\" 2>/dev/null | tr -cd 0-9); "
      "case \"$(readlink /proc/${s:-0}/exe 2>/dev/null)\" in "
      "*/gpuctld|*'/gpuctld (deleted)') if alive \"$s\"; then "
      "echo \"serving $s $(sha256sum < /proc/$s/exe | cut -d' ' -f1)\"; else echo 'serving none'; fi;; "
      "*) echo 'serving none';; esac; "
      "echo \"machine $(uname -m)\"; "
      "v=$(getconf GNU_LIBC_VERSION 2>/dev/null | cut -d' ' -f2); echo \"glibc ${v:-none}\"; "
      "echo \"os $( (. /etc/os-release 2>/dev/null && echo \"$PRETTY_NAME\") | head -n1 | tr -cd '[:print:]')\"; "
      "t=$(command -v tmux 2>/dev/null); echo \"tmux ${t:-none}\"; "
      "m=none; for x in apt-get dnf yum zypper apk; do if command -v $x >/dev/null 2>&1; then m=$x; break; fi; done; "
      "echo \"packages $m\"; "
      "if [ \"$(id -u)\" = 0 ]; then echo 'root yes'; else echo 'root no'; fi";
  return out;
}

namespace {

std::optional<int> ParsePidValue(const std::string& value) {
  int pid = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), pid);
  if (ec != std::errc() || end != value.data() + value.size() || pid <= 0) return std::nullopt;
  return pid;
}

}  // namespace

Result<RemoteAgentState> ParseRemoteAgentState(const std::string& output) {
  static const std::vector<std::string> kKeys = {"binary",  "config", "systemd", "running", "active", "serving",
                                                 "machine", "glibc",  "os",      "tmux",    "packages", "root"};
  RemoteAgentState state;
  std::vector<std::string> seen;
  std::istringstream lines(output);
  std::string line;
  auto none_or = [](const std::string& value) { return value == "none" ? std::string() : value; };
  while (std::getline(lines, line)) {
    size_t space = line.find(' ');
    std::string key = line.substr(0, space);
    std::string value = space == std::string::npos ? "" : line.substr(space + 1);
    bool ok = true;
    if (key == "binary") {
      state.binary_sha256 = none_or(value);
    } else if (key == "config") {
      state.config_sha256 = none_or(value);
    } else if (key == "systemd") {
      state.systemd = value == "yes";
    } else if (key == "active") {
      state.unit_active = value == "yes";
    } else if (key == "running") {
      if (value != "none") {
        state.pid = ParsePidValue(value);
        ok = state.pid.has_value();
      }
    } else if (key == "serving") {
      if (value != "none") {
        size_t sep = value.find(' ');
        state.serving_pid = ParsePidValue(value.substr(0, sep));
        state.serving_sha256 = sep == std::string::npos ? "" : value.substr(sep + 1);
        ok = state.serving_pid.has_value() && state.serving_sha256.size() == 64;
      }
    } else if (key == "machine") {
      state.machine = value;
      ok = !value.empty();
    } else if (key == "glibc") {
      state.glibc = none_or(value);
    } else if (key == "os") {
      state.os = value;
    } else if (key == "tmux") {
      state.tmux = none_or(value);
    } else if (key == "packages") {
      state.package_manager = none_or(value);
    } else if (key == "root") {
      state.root = value == "yes";
    } else {
      ok = false;
    }
    if (!ok || std::find(seen.begin(), seen.end(), key) != seen.end()) {
      return Internal("unexpected line from the node's probe: '" + line + "'");
    }
    seen.push_back(key);
  }
  if (seen.size() != kKeys.size()) {
    return Internal("the node's probe printed " + std::to_string(seen.size()) + " of " +
                    std::to_string(kKeys.size()) + " lines:\n" + output);
  }
  return state;
}

Result<std::string> InstallTmuxCommand(const std::string& package_manager) {
  // apt's lists may be missing on a fresh image (debootstrap, cloud images
  // that clean them): install, and update the lists only if that fails.
  if (package_manager == "apt-get") {
    return std::string(
        "export DEBIAN_FRONTEND=noninteractive; "
        "apt-get install -y -q --no-install-recommends tmux || "
        "{ apt-get update -q && apt-get install -y -q --no-install-recommends tmux; }");
  }
  if (package_manager == "dnf" || package_manager == "yum") return package_manager + " install -y tmux";
  if (package_manager == "zypper") return std::string("zypper --non-interactive install tmux");
  if (package_manager == "apk") return std::string("apk add --no-cache tmux");
  return InvalidArgument("no known package manager ('" + package_manager + "')");
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
  // The pidfile is removed and made anew with noclobber (O_EXCL): a link
  // planted in its place is removed, never written through.
  std::string pidfile = ShellQuote(layout.pidfile);
  return "cd / || exit 1; rm -f " + pidfile + " || exit 1; setsid nohup " + ShellQuote(layout.binary) +
         " --config " + ShellQuote(layout.config) + " >>" + ShellQuote(layout.log) +
         " 2>&1 </dev/null & (set -C; echo $! > " + pidfile + ") && cat " + pidfile;
}

std::string StartSystemdCommand() {
  return "systemctl daemon-reload && systemctl enable --quiet gpuctld && systemctl restart gpuctld && "
         "systemctl show -p MainPID --value gpuctld";
}

std::string ReadinessCommand(const AgentLayout& layout, int pid) {
  return std::string(kAliveFunction) + "if ! alive " + std::to_string(pid) + "; then echo dead; elif [ -S " +
         ShellQuote(layout.socket) + " ]; then echo ready; else echo starting; fi";
}

std::string LogMarkCommand(const AgentLayout& layout, bool systemd) {
  if (systemd) return "date +%s";
  return "stat -c %s " + ShellQuote(layout.log) + " 2>/dev/null || echo 0";
}

std::string LogTailCommand(const AgentLayout& layout, bool systemd, uint64_t mark) {
  if (systemd) return "journalctl -u gpuctld --since @" + std::to_string(mark) + " -n 20 --no-pager 2>&1";
  // tail -c +N starts at byte N, counted from 1.
  return "tail -c +" + std::to_string(mark + 1) + " " + ShellQuote(layout.log) + " 2>&1 | tail -n 20";
}

}  // namespace gpuctl::client
