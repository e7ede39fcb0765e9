#include "agents/sys/tmux_text.h"

namespace gpuctl::sys {
namespace {

bool Has(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

}  // namespace

TmuxFailure ClassifyTmuxError(std::string_view err) {
  // No socket file, or a stale one left by a server that died.
  if (Has(err, "no server running")) return TmuxFailure::kNoServer;
  if (Has(err, "error connecting to") && (Has(err, "No such file or directory") || Has(err, "Connection refused"))) {
    return TmuxFailure::kNoServer;
  }
  // A server in the middle of exiting: it accepts the connection and closes
  // it at once ("server exited unexpectedly"), or shuts the client down
  // ("server exited"). Older tmux said "lost server".
  if (Has(err, "server exited") || Has(err, "lost server")) return TmuxFailure::kNoServer;
  // "can't find session: x" (and "can't find window: x" from list-panes -s);
  // a server with no session at all (it is kept with exit-empty off) says
  // "no current target", or "no such session: =x" (show-environment).
  if (Has(err, "can't find ") || Has(err, "no current target") || Has(err, "no such session")) {
    return TmuxFailure::kNoSuchSession;
  }
  if (Has(err, "duplicate session")) return TmuxFailure::kDuplicate;
  return TmuxFailure::kOther;
}

std::string TmuxLiteralArgument(std::string_view arg) {
  std::string out(arg);
  // tmux drops the final ';' and, when a '\' precedes it, turns that '\'
  // into the ';': "a\;" reaches the command as "a;", "a\\;" as "a\;".
  if (!out.empty() && out.back() == ';') out.insert(out.size() - 1, 1, '\\');
  return out;
}

std::string TmuxLiteralFormatArgument(std::string_view arg) {
  std::string doubled;
  doubled.reserve(arg.size());
  for (char c : arg) {
    doubled.push_back(c);
    if (c == '#') doubled.push_back('#');
  }
  return TmuxLiteralArgument(doubled);
}

}  // namespace gpuctl::sys
