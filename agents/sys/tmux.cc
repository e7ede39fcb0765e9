// tmux through the CommandRunner: every call is one `tmux` process with an
// argv vector. What tmux prints on stderr is the only way to tell "no such
// session" from real failures, so those few messages are matched
// (tmux_text.cc).
#include "agents/sys/tmux.h"

#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <string_view>
#include <thread>
#include <utility>

#include <spdlog/spdlog.h>

#include "agents/sys/command_runner.h"
#include "agents/sys/tmux_text.h"
#include "agents/sys/text_fields.h"

namespace gpuctl::sys {
namespace {

bool ValidSessionName(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

bool ValidEnvKey(std::string_view key) {
  return !key.empty() && key.find('=') == std::string_view::npos &&
         key.find('\0') == std::string_view::npos;
}

class TmuxClient : public Tmux {
 public:
  TmuxClient(CommandRunner& runner, std::string socket_name, TmuxStartRetry retry)
      : runner_(runner), socket_(std::move(socket_name)), retry_(retry) {}

  Status NewSession(const TmuxSessionSpec& spec) override;
  bool HasSession(const std::string& session) override;
  Result<int64_t> PanePid(const std::string& session) override;
  Status KillSession(const std::string& session) override;
  Result<std::vector<std::string>> ListSessions() override;
  Result<std::string> SessionEnvironment(const std::string& session, const std::string& name) override;

 private:
  // `tmux -f /dev/null -L socket args...`. -f /dev/null: a server this call
  // starts reads no tmux.conf, whose settings (default-command, base-index,
  // remain-on-exit, hooks) would change how jobs run.
  Result<CommandOutput> Run(std::vector<std::string> args);
  Status Failed(const std::string& what, const CommandOutput& out) const;
  // Runs the new-session command `args`, trying again while the server is
  // exiting (see Tmux::NewSession).
  Status Start(const TmuxSessionSpec& spec, const std::vector<std::string>& args);
  // Whether the existing `spec.session` holds every entry of spec.env.
  bool StartedBy(const TmuxSessionSpec& spec);

  CommandRunner& runner_;
  std::string socket_;
  TmuxStartRetry retry_;
};

Result<CommandOutput> TmuxClient::Run(std::vector<std::string> args) {
  std::vector<std::string> argv = {"tmux", "-f", "/dev/null", "-L", socket_};
  argv.insert(argv.end(), std::make_move_iterator(args.begin()), std::make_move_iterator(args.end()));
  auto out = runner_.Run(argv);
  if (!out.ok() && out.status().code() == ErrorCode::kNotFound) {
    return NotFound("tmux is not installed (" + out.status().message() +
                    "); install it with `apt-get install tmux`");
  }
  return out;
}

Status TmuxClient::Failed(const std::string& what, const CommandOutput& out) const {
  std::string err(Trim(out.stderr_text));
  if (err.empty()) err = "exit code " + std::to_string(out.exit_code);
  return Internal(what + " on tmux socket '" + socket_ + "' failed: " + err);
}

Status TmuxClient::NewSession(const TmuxSessionSpec& spec) {
  if (!ValidSessionName(spec.session)) {
    return InvalidArgument("tmux session name '" + spec.session +
                           "' is invalid: use letters, digits, '.', '_' and '-'");
  }
  if (spec.argv.empty() || spec.argv[0].empty()) {
    return InvalidArgument("tmux session '" + spec.session + "' has no command to run");
  }
  if (!spec.cwd.empty()) {
    if (spec.cwd[0] != '/') {
      return InvalidArgument("working directory '" + spec.cwd + "' must be an absolute path");
    }
    // tmux falls back to another directory, silently, when -c names a
    // missing one; a job must not run somewhere it did not ask for.
    struct stat st {};
    if (::stat(spec.cwd.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return NotFound("working directory '" + spec.cwd + "' does not exist or is not a directory");
    }
  }

  // One tmux invocation, two commands (";" ends the first): the server, a
  // fresh one or one that runs, is told first to outlive its last session,
  // so no start ever meets it exiting. -q: a tmux older than 2.7 has no
  // exit-empty, and the start must not fail over it.
  std::vector<std::string> args = {"set-option", "-s", "-q", "exit-empty", "off", ";",
                                   "new-session", "-d", "-s", TmuxNativeSessionName(spec.session)};
  if (!spec.cwd.empty()) {
    args.push_back("-c");
    args.push_back(TmuxLiteralFormatArgument(spec.cwd));
  }
  for (const auto& [key, value] : spec.env) {
    if (!ValidEnvKey(key)) return InvalidArgument("environment name '" + key + "' is invalid");
    args.push_back("-e");
    args.push_back(TmuxLiteralArgument(key + "=" + value));
  }
  args.push_back("--");
  if (spec.argv.size() == 1) {
    // tmux hands a lone argument to `sh -c` as a command line, so a path
    // with spaces or '$' would be parsed. A constant script that execs its
    // $0 runs it verbatim instead, keeping the pid (exec) and no quoting.
    args.insert(args.end(), {"/bin/sh", "-c", "exec \"$0\"", TmuxLiteralArgument(spec.argv[0])});
  } else {
    // Two or more arguments: tmux execvp()s them as they are.
    for (const auto& arg : spec.argv) args.push_back(TmuxLiteralArgument(arg));
  }
  return Start(spec, args);
}

Status TmuxClient::Start(const TmuxSessionSpec& spec, const std::vector<std::string>& args) {
  const int attempts = std::max(1, retry_.attempts);
  auto pause = retry_.first_pause;
  for (int attempt = 1;; ++attempt) {
    auto out = Run(args);
    if (!out.ok()) return out.status().Wrap("starting tmux session '" + spec.session + "'");
    if (out->exit_code == 0) return Status::Ok();
    const TmuxFailure failure = ClassifyTmuxError(out->stderr_text);
    if (failure == TmuxFailure::kDuplicate) {
      // On a later try the session may be the one an earlier try started
      // whose reply was lost (and has-session could not tell).
      if (attempt > 1 && StartedBy(spec)) return Status::Ok();
      return Status(ErrorCode::kAlreadyExists,
                    "tmux session '" + spec.session + "' already exists on socket '" + socket_ + "'");
    }
    if (failure != TmuxFailure::kNoServer) return Failed("new-session '" + spec.session + "'", *out);

    // The server was exiting (its last session had just ended) or not yet
    // listening. A server that exits never ran the command; one that died
    // while running it may have. Look before trying again: a job must not
    // start twice.
    if (HasSession(spec.session)) {
      if (StartedBy(spec)) return Status::Ok();
      return Status(ErrorCode::kAlreadyExists, "tmux session '" + spec.session + "' on socket '" + socket_ +
                                                   "' was created by someone else while this start was retried");
    }
    if (attempt >= attempts) {
      return Unavailable(Failed("new-session '" + spec.session + "'", *out).message() + " (" +
                         std::to_string(attempts) + " tries, the tmux server kept exiting)");
    }
    spdlog::info("tmux server on socket '{}' was exiting or not listening ({}); starting session '{}' again in {} ms",
                 socket_, Trim(out->stderr_text), spec.session, pause.count());
    std::this_thread::sleep_for(pause);
    pause *= 2;
  }
}

bool TmuxClient::StartedBy(const TmuxSessionSpec& spec) {
  for (const auto& [key, value] : spec.env) {
    auto got = SessionEnvironment(spec.session, key);
    if (!got.ok() || *got != value) return false;
  }
  return true;
}

bool TmuxClient::HasSession(const std::string& session) {
  if (!ValidSessionName(session)) return false;
  // '=' asks for this exact name; without it tmux takes a unique prefix, and
  // "job1" would find "job10".
  auto out = Run({"has-session", "-t", "=" + TmuxNativeSessionName(session)});
  if (!out.ok()) {
    spdlog::warn("checking tmux session '{}': {}", session, out.status().ToString());
    return false;
  }
  if (out->exit_code == 0) return true;
  if (ClassifyTmuxError(out->stderr_text) == TmuxFailure::kOther) {
    spdlog::warn("{}", Failed("has-session '" + session + "'", *out).ToString());
  }
  return false;
}

Result<int64_t> TmuxClient::PanePid(const std::string& session) {
  if (!ValidSessionName(session)) return InvalidArgument("invalid tmux session name '" + session + "'");
  // list-panes, not display-message: display-message prints an empty line
  // and exits 0 when the target session does not exist. The target is a
  // window, so the ':' is needed: a bare "=job1" falls back to a prefix
  // match and finds "job10".
  auto out = Run({"list-panes", "-s", "-t", "=" + TmuxNativeSessionName(session) + ":", "-F",
                  "#{pane_pid}"});
  if (!out.ok()) return out.status().Wrap("reading the pane pid of tmux session '" + session + "'");
  if (out->exit_code != 0) {
    if (ClassifyTmuxError(out->stderr_text) != TmuxFailure::kOther) {
      return NotFound("tmux session '" + session + "' does not exist");
    }
    return Failed("list-panes '" + session + "'", *out);
  }
  std::string_view text = out->stdout_text;
  text = text.substr(0, text.find('\n'));  // the first pane
  if (text.empty()) return NotFound("tmux session '" + session + "' has no pane");
  int64_t pid = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), pid);
  if (ec != std::errc() || end != text.data() + text.size() || pid <= 0) {
    return Internal("tmux printed '" + std::string(text) + "' as the pane pid of '" + session + "'");
  }
  return pid;
}

Status TmuxClient::KillSession(const std::string& session) {
  if (!ValidSessionName(session)) return InvalidArgument("invalid tmux session name '" + session + "'");
  auto out = Run({"kill-session", "-t", "=" + TmuxNativeSessionName(session)});
  if (!out.ok()) return out.status().Wrap("killing tmux session '" + session + "'");
  if (out->exit_code == 0 || ClassifyTmuxError(out->stderr_text) != TmuxFailure::kOther) return Status::Ok();
  return Failed("kill-session '" + session + "'", *out);
}

Result<std::vector<std::string>> TmuxClient::ListSessions() {
  auto out = Run({"list-sessions", "-F", "#{session_name}"});
  if (!out.ok()) return out.status().Wrap("listing tmux sessions");
  std::vector<std::string> sessions;
  if (out->exit_code != 0) {
    if (ClassifyTmuxError(out->stderr_text) != TmuxFailure::kOther) return sessions;  // no server: no sessions
    return Failed("list-sessions", *out);
  }
  std::string_view text = out->stdout_text;
  while (!text.empty()) {
    std::string_view line = text.substr(0, text.find('\n'));
    text.remove_prefix(std::min(text.size(), line.size() + 1));
    if (line.empty()) continue;
    std::string name(line);
    for (char& c : name) {
      if (c == '+') c = '.';
    }
    sessions.push_back(std::move(name));
  }
  return sessions;
}

Result<std::string> TmuxClient::SessionEnvironment(const std::string& session, const std::string& name) {
  if (!ValidSessionName(session)) return InvalidArgument("invalid tmux session name '" + session + "'");
  auto out = Run({"show-environment", "-t", "=" + TmuxNativeSessionName(session), name});
  if (!out.ok()) return out.status().Wrap("reading the environment of tmux session '" + session + "'");
  std::string prefix = name + "=";
  if (out->exit_code != 0 || out->stdout_text.rfind(prefix, 0) != 0) {
    return NotFound(name + " is not set in tmux session '" + session + "'");
  }
  std::string value = out->stdout_text.substr(prefix.size());
  while (!value.empty() && value.back() == '\n') value.pop_back();
  return value;
}

}  // namespace

std::string TmuxNativeSessionName(std::string_view session) {
  std::string name(session);
  for (char& c : name) {
    if (c == '.') c = '+';
  }
  return name;
}

std::unique_ptr<Tmux> MakeTmux(CommandRunner& runner, std::string socket_name, TmuxStartRetry retry) {
  return std::make_unique<TmuxClient>(runner, std::move(socket_name), retry);
}

}  // namespace gpuctl::sys
