// The seam to tmux, where training jobs live so they survive the agent.
// Sessions run on gpuctl's own tmux server socket (tmux -L NAME), apart from
// the user's sessions; tests use a socket of their own. A server gpuctl
// starts reads no tmux.conf (-f /dev/null), so a user's settings cannot
// change how jobs run.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace gpuctl::sys {

class CommandRunner;

struct TmuxSessionSpec {
  std::string session;            // [A-Za-z0-9._-]+
  std::vector<std::string> argv;  // run directly, never through a shell string
  std::map<std::string, std::string> env;  // set in the session (tmux -e)
  std::string cwd;                // empty: the agent's cwd
};

class Tmux {
 public:
  virtual ~Tmux() = default;
  // Starts a detached session running argv, every argument, env value and
  // cwd reaching it verbatim. The server is told to outlive its last session
  // (exit-empty off): a server exits when its last session ends, and a start
  // that connects just then fails. A start that still meets an exiting (or
  // not yet listening) server is tried again, up to TmuxStartRetry::attempts
  // times; before each new try it checks that the session does not exist,
  // and one that does and holds every entry of spec.env (the launcher's
  // GPUCTL_RUN_ID) is this call's start, whose reply was lost: Ok, never a
  // second start. Errors: kAlreadyExists when the session exists (and is not
  // this call's); kNotFound when tmux is not installed or cwd is not a
  // directory; kInvalidArgument for a bad name, empty argv, relative cwd or
  // bad env name; kUnavailable when the server kept exiting through every
  // try; kInternal with tmux's stderr otherwise (not retried).
  virtual Status NewSession(const TmuxSessionSpec& spec) = 0;
  // Exact name match. No server running means no session. False too when
  // tmux cannot be asked (logged as a warning).
  virtual bool HasSession(const std::string& session) = 0;
  // The pid of the session's first pane (the process tmux started; it leads
  // its own process group). kNotFound when the session is gone. Just after
  // NewSession the pane may not have exec'd yet and can still sit in the
  // tmux server's process group for a moment, so use the pid itself as the
  // group id rather than reading the group from /proc.
  virtual Result<int64_t> PanePid(const std::string& session) = 0;
  // A missing session is not an error. The pane's process gets SIGHUP; one
  // that ignores it outlives the session, so signal its group first.
  virtual Status KillSession(const std::string& session) = 0;
  // Every session on the socket, by the names NewSession was given (tmux's
  // '+' read back as '.'). No server running means none.
  virtual Result<std::vector<std::string>> ListSessions() = 0;
  // A variable of the session's environment (set with TmuxSessionSpec::env).
  // kNotFound when the session or the variable is missing.
  virtual Result<std::string> SessionEnvironment(const std::string& session, const std::string& name) = 0;
};

// The name tmux itself shows for `session` (tmux -L gpuctl attach -t ...).
// tmux turns '.' into '_' in session names and reads '.' in a target as a
// pane separator, so '.' is written as '+' (which the name rules exclude, so
// no two names meet).
std::string TmuxNativeSessionName(std::string_view session);

// How NewSession rides out a tmux server that is exiting. An exit takes
// milliseconds; the pauses (25+50+100+200 ms) outlast it even on a loaded
// host and still keep a start, and shutdown, well under a second.
struct TmuxStartRetry {
  int attempts = 5;                            // new-session runs at most this often
  std::chrono::milliseconds first_pause{25};   // before the second try; doubled after each
};

// tmux through `runner`, on server socket `socket_name`.
std::unique_ptr<Tmux> MakeTmux(CommandRunner& runner, std::string socket_name = "gpuctl",
                               TmuxStartRetry retry = {});

}  // namespace gpuctl::sys
