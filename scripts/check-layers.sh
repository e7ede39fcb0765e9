#!/usr/bin/env bash
# Layers that check themselves (ARCHITECTURE.md, conventions 1 and 10): fails
# when code reaches past its floor. Rules, over agents/ daemon/ client/ common/:
#   os      OS headers and calls (<fcntl.h>, <unistd.h>, <sys/*.h>, <dirent.h>,
#           <poll.h>, std::filesystem, *_clock::now, sleep_for/until, getenv,
#           "/proc/... literals, ::open/::write/::kill/...) only in agents/sys
#   grpc    gRPC and the wire types (grpc::, v1::, <grpcpp/...>, "gpuctl/v1/...")
#           only in daemon/service, daemon/server and client
#   layer   #include "..." and target_link_libraries(gpuctl_*) point down only:
#           common < agents/sys < agents/{events,health,train,guard,build}
#           < agents/provision < daemon; client uses common and agents/sys only
#   spdlog  no target links spdlog::* or fmt::* (their header-only mode would
#           compile both libraries into every file that logs again); link
#           gpuctl_spdlog (cmake/spdlog.cmake)
# Prints FILE:LINE: RULE: TEXT for each violation and exits 1 if there is any.
#   bash scripts/check-layers.sh [ROOT]    (ROOT: a source tree; default this one)
set -euo pipefail
root=${1:-"$(dirname "$0")/.."}
cd "$root"

# Where a rule does not apply: PATH_PREFIX RULE, then why. Keep it short.
allowlist='
client/ssh/ os        the client SSH seam (libssh, sockets, poll): to the client what agents/sys is to the agent
daemon/metrics/ grpc  builds /metrics from the v1 snapshots the API serves, so -o json and Prometheus agree
'

dirs=()
for d in agents daemon client common; do [ -d "$d" ] && dirs+=("$d"); done
[ ${#dirs[@]} -gt 0 ] || { echo "check-layers: no agents/ daemon/ client/ common/ under $root" >&2; exit 2; }

mapfile -t files < <(find "${dirs[@]}" -type f \( -name '*.cc' -o -name '*.h' -o -name CMakeLists.txt \) | LC_ALL=C sort)
status=0
awk -v allowlist="$allowlist" '
function layer(path) {
  if (path ~ /^common\//) return "common"
  if (path ~ /^agents\/[a-z_]+\//) { split(path, p, "/"); return "agents/" p[2] }
  if (path ~ /^daemon\//) return "daemon"
  if (path ~ /^client\//) return "client"
  return ""
}
function floor_of(l) {
  if (l == "common") return 0
  if (l == "agents/sys") return 1
  if (l == "agents/provision") return 3
  if (l ~ /^agents\//) return 2
  return 4  # daemon, client
}
# May layer `from` use layer `to`? Down only, never sideways on a floor; the
# client and the daemon never use each other, and the client talks to agents
# over gRPC, so of the agent it uses common and agents/sys only.
function may_use(from, to) {
  if (from == to || from == "" || to == "") return 1
  if (from == "client") return floor_of(to) <= 1
  if (to == "client") return 0
  return floor_of(to) < floor_of(from)
}
function allowed(path, rule,    i) {
  for (i = 1; i <= n_allow; i++)
    if (allow_rule[i] == rule && index(path, allow_prefix[i]) == 1) return 1
  return 0
}
function report(rule, text) {
  gsub(/^[ \t]+/, "", text)
  printf "%s:%d: %s: %s\n", FILENAME, FNR, rule, text
  failed = 1
}
BEGIN {
  n = split(allowlist, lines, "\n")
  for (i = 1; i <= n; i++) {
    if (split(lines[i], f, " ") < 2) continue
    n_allow++; allow_prefix[n_allow] = f[1]; allow_rule[n_allow] = f[2]
  }
  os = "#include <(fcntl|unistd|dirent|poll|filesystem|sys/[a-z_]+)(\\.h)?>|std::filesystem|_clock::now|" \
       "sleep_(for|until)|getenv|\"/proc/|(^|[^A-Za-z0-9_:.>])::(open|openat|read|write|close|fstat|stat|lstat|" \
       "rename|renameat|unlink|unlinkat|ftruncate|fsync|mkdir|rmdir|kill|fork|vfork|execv|execvp|execve|" \
       "waitpid|isatty|poll|pipe|pipe2|dup|dup2|getauxval)\\("
  grpc = "(^|[^A-Za-z0-9_])(grpc|v1)::|#include <grpc(pp)?/|#include \"gpuctl/v1/"
  # target_link_libraries names -> the layer they are.
  target["gpuctl_common"] = "common"; target["gpuctl_sys"] = "agents/sys"
  target["gpuctl_events"] = "agents/events"; target["gpuctl_health"] = "agents/health"
  target["gpuctl_train"] = "agents/train"; target["gpuctl_guard"] = "agents/guard"
  target["gpuctl_build"] = "agents/build"; target["gpuctl_provision"] = "agents/provision"
  target["gpuctl_daemon_lib"] = "daemon"; target["gpuctl_client_lib"] = "client"; target["gpuctl_ssh"] = "client"
}
FNR == 1 { here = layer(FILENAME); cmake = FILENAME ~ /CMakeLists\.txt$/; in_link = 0 }
cmake {
  code = $0; sub(/#.*/, "", code)
  if (code ~ /target_link_libraries\(/) in_link = 1
  if (in_link) {
    rest = code
    while (match(rest, /(gpuctl_[a-z_]+|gRPC::[A-Za-z_+]+|(spdlog|fmt)::[A-Za-z_-]+)/)) {
      name = substr(rest, RSTART, RLENGTH); rest = substr(rest, RSTART + RLENGTH)
      if (name ~ /^(spdlog|fmt)::/)
        report("spdlog", "links " name ": link gpuctl_spdlog instead (cmake/spdlog.cmake)")
      else if ((name == "gpuctl_proto" || name ~ /^gRPC::/) && here != "daemon" && here != "client")
        report("grpc", "links " name)
      else if ((name in target) && !may_use(here, target[name]))
        report("layer", "links " name " (" target[name] ") from " here)
    }
    if (code ~ /\)/) in_link = 0
  }
  next
}
{
  code = $0
  if (code ~ /^[ \t]*(\/\/|\/\*|\*( |\/|$))/) next  # comments may name what code may not do
  sub(/[ \t]\/\/ .*/, "", code)
  if (code ~ os && here != "agents/sys" && !allowed(FILENAME, "os")) report("os", code)
  if (code ~ grpc && FILENAME !~ /^(daemon\/service|daemon\/server|client)\// && !allowed(FILENAME, "grpc"))
    report("grpc", code)
  if (match(code, /#include "[a-z_]+\/[A-Za-z0-9_\/.]+"/)) {
    used = layer(substr(code, RSTART + 10, RLENGTH - 11))
    if (!may_use(here, used)) report("layer", "includes " used " from " here)
  }
}
END { exit failed }
' "${files[@]}" || status=$?
case $status in
  0) ;;
  1) echo "check-layers: the violations above break the layering (see the rules atop scripts/check-layers.sh)" >&2 ;;
  *) echo "check-layers: the check itself failed (awk exit $status)" >&2; status=2 ;;
esac
exit $status
