#include "agents/train/launch_command.h"

namespace gpuctl::train {

const char* const kJobWrapperScript =
    "log=$1 status=$2 dir=$3 cgroup=$4; shift 4\n"
    "stop=; trap 'stop=129' HUP; trap 'stop=130' INT; trap 'stop=143' TERM\n"
    "exec 3>&1\n"
    "echo \"gpuctl: output goes to $log\"\n"
    "exec >>\"$log\" 2>&1 </dev/null\n"
    "record() { printf '%s\\n' \"$1\" >\"$status.tmp\" && mv -f \"$status.tmp\" \"$status\"; }\n"
    "if [ -n \"$cgroup\" ] && ! echo $$ >\"$cgroup\"; then echo \"gpuctl: cannot join cgroup $cgroup\"; record 125; exit 125; fi\n"
    "if [ -n \"$dir\" ] && ! cd \"$dir\"; then echo \"gpuctl: cannot enter $dir\"; record 126; exit 126; fi\n"
    "if [ -n \"$stop\" ]; then record \"$stop\"; exit \"$stop\"; fi\n"
    "\"$@\" 3>&-\n"
    "code=$?\n"
    "record \"$code\"\n"
    "echo \"gpuctl: exited $code\" >&3\n"
    "exit \"$code\"\n";

sys::TmuxSessionSpec BuildLaunch(const JobSpec& spec, const LaunchPaths& paths, const std::string& pct) {
  sys::TmuxSessionSpec launch;
  launch.session = TmuxSessionName(spec.name);
  std::vector<std::string>& argv = launch.argv;
  if (!spec.container.empty()) {
    argv = {pct, "exec", spec.container, "--"};
  }
  // The environment goes through env(1) rather than tmux -e so that it
  // also crosses into a container, where pct exec starts from a clean one.
  argv.push_back("env");
  for (const auto& [key, value] : EffectiveEnv(spec)) argv.push_back(key + "=" + value);
  argv.insert(argv.end(), {"sh", "-c", kJobWrapperScript, "gpuctl-job", paths.log_path, paths.exit_path, spec.cwd,
                            paths.cgroup_procs});
  for (std::string& arg : EffectiveCommand(spec)) argv.push_back(std::move(arg));
  return launch;
}

}  // namespace gpuctl::train
