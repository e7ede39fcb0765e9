// Pure functions over the text tmux reads and prints, apart from running it
// (agents/sys/tmux.cc), so each rule is tested with literals. Read against
// tmux 3.3a (client.c, cmd-parse.c, format.c).
#pragma once

#include <string>
#include <string_view>

namespace gpuctl::sys {

// How a failed tmux command ended, read from its stderr.
enum class TmuxFailure {
  // Nothing listens on the socket, or the server is exiting (it closes a
  // client that connects then: "server exited unexpectedly"): no sessions.
  // For new-session this is transient: the next try starts a fresh server.
  kNoServer,
  kNoSuchSession,  // the server runs, the session does not
  kDuplicate,      // new-session with a taken name
  kOther,
};

TmuxFailure ClassifyTmuxError(std::string_view stderr_text);

// `arg` written so that tmux hands it on as it is. tmux reads an argument
// that ends in ';' as the end of a command (the rest of argv would run as
// further tmux commands: ["x;", "kill-server"]); "\;" at the end stands for
// a literal ';'.
std::string TmuxLiteralArgument(std::string_view arg);

// `arg` for an option tmux expands as a format (new-session -c): '#' is
// doubled, or "#S" and "#(cmd)" in a directory name would be replaced (and
// tmux falls back, silently, to another directory). Then as above.
std::string TmuxLiteralFormatArgument(std::string_view arg);

}  // namespace gpuctl::sys
