#include "agents/train/launch_command.h"

namespace gpuctl::train {

const char* const kJobWrapperScript =
    "log=$1 status=$2 dir=$3 cgroup=$4 pidfile=$5; shift 5\n"
    "stop= child=\n"
    // A signal to the wrapper is passed on to the command's own session (in
    // a container; on the host the command shares the wrapper's group and
    // has it already).
    "on() { stop=$1; [ -n \"$child\" ] && { kill -s $2 -- -$child || kill -s $2 $child; } 2>/dev/null; }\n"
    "trap 'on 129 HUP' HUP; trap 'on 130 INT' INT; trap 'on 143 TERM' TERM\n"
    "exec 3>&1\n"
    "echo \"gpuctl: output goes to $log\"\n"
    "exec >>\"$log\" 2>&1 </dev/null\n"
    // A full disk (the log may have filled it) cannot take a new file: the
    // status (and a container job's pid) then goes over a spare made at the
    // start, in place (1<> does not truncate), zero-padded to the spare's
    // exact length, so no block and no other tool is needed; the readers take
    // leading zeros.
    "spare() { [ -n \"$1\" ] && printf '0000000000\\n' >\"$1.spare\" 2>/dev/null; }\n"
    "spare \"$status\"; spare \"$pidfile\"\n"
    "record() {\n"
    "  if printf '%s\\n' \"$1\" >\"$2.tmp\" && mv -f \"$2.tmp\" \"$2\"; then rm -f \"$2.spare\"; return; fi\n"
    "  rm -f \"$2.tmp\"\n"
    "  [ -f \"$2.spare\" ] && printf '%010d\\n' \"$1\" 1<>\"$2.spare\" && mv -f \"$2.spare\" \"$2\"\n"
    "}\n"
    // A container build is placed in its cgroup by the agent, from outside
    // (container_build_gate.h): the pid here, then wait for the answer.
    "case $cgroup in\n"
    "gate:*)\n"
    "  gate=${cgroup#gate:} n=0\n"
    "  record $$ \"$gate.pid\"\n"
    "  while [ ! -e \"$gate\" ] && [ -z \"$stop\" ]; do\n"
    "    if [ $n -ge 1200 ]; then echo \"gpuctl: the agent never placed the build in its memory cgroup\"; record 125 \"$status\"; exit 125; fi\n"
    "    n=$((n + 1)); sleep 0.05 2>/dev/null || sleep 1\n"
    "  done\n"
    "  if [ -e \"$gate\" ]; then\n"
    "    read -r answer <\"$gate\"\n"
    "    [ \"$answer\" = ok ] || { echo \"gpuctl: $answer\"; record 125 \"$status\"; exit 125; }\n"
    "  fi ;;\n"
    "*) if [ -n \"$cgroup\" ] && ! echo $$ >\"$cgroup\"; then echo \"gpuctl: cannot join cgroup $cgroup\"; record 125 \"$status\"; exit 125; fi ;;\n"
    "esac\n"
    "if [ -n \"$dir\" ] && ! cd \"$dir\"; then echo \"gpuctl: cannot enter $dir\"; record 126 \"$status\"; exit 126; fi\n"
    "if [ -n \"$stop\" ]; then record \"$stop\" \"$status\"; exit \"$stop\"; fi\n"
    "if [ -z \"$pidfile\" ]; then\n"
    "  \"$@\" 3>&-\n"
    "  code=$?\n"
    "else\n"
    // In the background without job control the command is not a group
    // leader, so setsid(1) calls setsid() itself and execs: same pid. sh
    // starts a background command with SIGINT and SIGQUIT ignored, for good
    // (a Python would never raise KeyboardInterrupt): env(1) gives them
    // back their defaults where it can (coreutils 9), exec'ing in place too.
    "  if ! command -v setsid >/dev/null 2>&1; then \"$@\" 3>&- &\n"
    "  elif env --default-signal=INT,QUIT true 2>/dev/null; then setsid env --default-signal=INT,QUIT \"$@\" 3>&- &\n"
    "  else setsid \"$@\" 3>&- &\n"
    "  fi\n"
    "  child=$!\n"
    "  record \"$child\" \"$pidfile\"\n"
    "  [ -n \"$stop\" ] && on \"$stop\" TERM\n"
    // wait returns early when a trap runs; wait again until the command is gone.
    "  while :; do wait \"$child\"; code=$?; kill -0 \"$child\" 2>/dev/null || break; done\n"
    "fi\n"
    "record \"$code\" \"$status\"\n"
    "echo \"gpuctl: exited $code\" >&3\n"
    "exit \"$code\"\n";

sys::TmuxSessionSpec BuildLaunch(const JobSpec& spec, const LaunchPaths& paths, const std::string& pct) {
  return BuildLaunch(spec, paths, pct, JobEnvironment{.vars = EffectiveEnv(spec), .whole = false, .set_by_gpuctl = {}});
}

sys::TmuxSessionSpec BuildLaunch(const JobSpec& spec, const LaunchPaths& paths, const std::string& pct,
                                 const JobEnvironment& env) {
  sys::TmuxSessionSpec launch;
  launch.session = TmuxSessionName(spec.name);
  std::vector<std::string>& argv = launch.argv;
  if (!spec.container.empty()) {
    argv = {pct, "exec", spec.container, "--"};
  }
  // The environment goes through env(1) rather than tmux -e so that it
  // also crosses into a container, where pct exec starts from a clean one.
  argv.push_back("env");
  if (env.whole) argv.push_back("-i");
  for (const auto& [key, value] : env.vars) argv.push_back(key + "=" + value);
  argv.insert(argv.end(), {"sh", "-c", kJobWrapperScript, "gpuctl-job", paths.log_path, paths.exit_path, spec.cwd,
                            paths.cgroup_procs, paths.pid_path});
  for (std::string& arg : EffectiveCommand(spec)) argv.push_back(std::move(arg));
  return launch;
}

}  // namespace gpuctl::train
