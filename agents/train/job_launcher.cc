#include "agents/train/job_launcher.h"

#include <cstdio>

#include "agents/sys/confined_root.h"
#include "agents/sys/directory_listing.h"
#include "agents/sys/environment.h"
#include "agents/sys/files.h"

namespace gpuctl::train {
namespace {

// The run's own variables on top of the spec's: its run id, and where
// NCCL's flight recorder writes its dump (beside the job's log, so a hang
// dump finds it), unless the user chose.
EnvMap RunVariables(const JobSpec& spec, const LaunchPaths& inside, const std::string& run_id) {
  EnvMap vars = {{"GPUCTL_RUN_ID", run_id}};
  std::string dir = inside.log_path.substr(0, inside.log_path.rfind('/') + 1);
  if (!dir.empty()) {
    if (!spec.env.contains("TORCH_NCCL_DEBUG_INFO_TEMP_FILE")) {
      vars["TORCH_NCCL_DEBUG_INFO_TEMP_FILE"] = dir + std::string(kNcclTracePrefix);
    }
    if (!spec.env.contains("TORCH_NCCL_DEBUG_INFO_PIPE_FILE")) {
      vars["TORCH_NCCL_DEBUG_INFO_PIPE_FILE"] = dir + std::string(kNcclPipePrefix);
    }
  }
  return vars;
}

}  // namespace

JobLauncher::JobLauncher(JobLauncherOptions options, const JobStore& store, sys::Tmux& tmux,
                         sys::ProcessControl& processes, sys::CommandRunner& runner)
    : options_(std::move(options)),
      store_(store),
      tmux_(tmux),
      processes_(processes),
      runner_(runner),
      agent_env_(options_.agent_env ? *options_.agent_env : sys::ProcessEnvironment()) {
  // Everything beneath a container's root is the container's to change:
  // the agent resolves those paths inside it (agents/sys/confined_root.h).
  if (!options_.lxc_rootfs_template.empty()) sys::AddConfinedRoot(options_.lxc_rootfs_template);
}

std::string JobLauncher::HostPathForContainer(const std::string& vmid, const std::string& inside) const {
  std::string root = options_.lxc_rootfs_template;
  size_t at = root.find("{vmid}");
  if (at != std::string::npos) root.replace(at, 6, vmid);
  while (!root.empty() && root.back() == '/') root.pop_back();
  return root + inside;
}

Status JobLauncher::CheckContainerRunning(const std::string& vmid) {
  Result<sys::CommandOutput> out = runner_.Run({options_.pct, "status", vmid});
  if (!out.ok()) {
    return FailedPrecondition("cannot check container " + vmid + ": " + out.status().message() +
                              " (--container needs a Proxmox host with pct)");
  }
  if (out->exit_code != 0) {
    std::string why = out->stderr_text.empty() ? out->stdout_text : out->stderr_text;
    while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
    return FailedPrecondition("container " + vmid + " does not exist or cannot be queried: " + why +
                              " (see pct list)");
  }
  if (out->stdout_text.find("status: running") == std::string::npos) {
    std::string state = out->stdout_text;
    while (!state.empty() && state.back() == '\n') state.pop_back();
    return FailedPrecondition("container " + vmid + " is not running (" + state + "); start it with: pct start " +
                              vmid);
  }
  return Status::Ok();
}

Result<Placement> JobLauncher::Plan(const JobSpec& spec, const std::string& run_id) {
  const std::string& name = spec.name;
  if (!spec.container.empty()) {
    if (Status s = CheckContainerRunning(spec.container); !s.ok()) return s;
    if (std::string root = HostPathForContainer(spec.container, ""); !sys::IsDirectory(root)) {
      return FailedPrecondition("container " + spec.container + " runs, but its root filesystem is not at " + root +
                                " (set gpuctld --lxc-rootfs)");
    }
  }
  Placement p;
  // The command runs in a session of its own, its pid written here: the
  // pane's end (the wrapper's exit, tmux closing it) then sends it no
  // SIGHUP, and a stop reaches its group once, through the agent alone.
  p.inside = {store_.LogPath(name), store_.ExitPath(name), "", store_.JobDir(name) + "/job_pid"};
  p.log_path = p.inside.log_path;
  p.exit_path = p.inside.exit_path;
  p.pid_path = p.inside.pid_path;
  if (!spec.container.empty()) {
    std::string dir = options_.container_state_dir + "/jobs/" + name;
    p.inside = {dir + "/output.log", dir + "/exit_status", "", dir + "/job_pid"};
    p.log_path = HostPathForContainer(spec.container, p.inside.log_path);
    p.exit_path = HostPathForContainer(spec.container, p.inside.exit_path);
    p.pid_path = HostPathForContainer(spec.container, p.inside.pid_path);
    // A build is governed in a cgroup beneath the container's, which only
    // the host can make and join: the wrapper waits for the agent to place it.
    if (options_.cgroups && spec.kind == kJobKindBuild) {
      p.inside.cgroup_procs = "gate:" + dir + "/cgroup_gate";
      p.cgroup_gate = HostPathForContainer(spec.container, dir + "/cgroup_gate");
    }
  }
  if (!spec.script.empty()) {
    std::string script = spec.container.empty() ? spec.script : HostPathForContainer(spec.container, spec.script);
    if (!sys::PathExists(script)) return InvalidArgument("--script " + spec.script + ": no such file");
    if (!sys::IsExecutableFile(script)) {
      return InvalidArgument("--script " + spec.script + " is not an executable file (chmod +x " + spec.script + ")");
    }
  }
  if (!spec.cwd.empty() && spec.container.empty() && !sys::IsDirectory(spec.cwd)) {
    return InvalidArgument("--cwd " + spec.cwd + (sys::PathExists(spec.cwd) ? ": not a directory" : ": no such directory"));
  }
  if (!spec.cwd.empty() && !spec.container.empty() && !sys::IsDirectory(HostPathForContainer(spec.container, spec.cwd))) {
    return InvalidArgument("--cwd " + spec.cwd + ": no such directory in container " + spec.container);
  }
  // The wrapper is started as `env K=V... sh -c ...`: a PATH without sh
  // would fail before it could record anything (a misleading "lost").
  if (auto path = spec.env.find("PATH"); path != spec.env.end() && spec.container.empty()) {
    if (!sys::FindOnPath("sh", path->second)) {
      return InvalidArgument("--env PATH=" + path->second +
                             ": no sh in it, which the job's wrapper needs; add /bin or /usr/bin");
    }
  }
  if (tmux_.HasSession(TmuxSessionName(name))) {
    const std::string session = sys::TmuxNativeSessionName(TmuxSessionName(name));
    return Status(ErrorCode::kAlreadyExists, "a tmux session '" + session +
                                                 "' exists without a running job; remove it with: tmux -L " +
                                                 options_.tmux_socket + " kill-session -t " + session);
  }
  p.env = BuildJobEnvironment(agent_env_, spec, RunVariables(spec, p.inside, run_id));
  p.run_command = EffectiveCommand(spec);
  // A command that cannot be found would print "started" and then fail
  // with 127: refused now, naming the PATH it was looked for on.
  if (Status s = CheckCommandResolves(spec, p.env); !s.ok()) return s;
  if (options_.cgroups && spec.container.empty()) p.cgroup = options_.cgroup_parent + "/" + name + "@" + run_id;
  if (Status s = CheckTmuxCanCarry(spec, p, run_id); !s.ok()) return s;
  return p;
}

Status JobLauncher::CheckTmuxCanCarry(const JobSpec& spec, const Placement& p, const std::string& run_id) const {
  // tmux hands a command to its server in one message of at most 16 KiB
  // (MAX_IMSGSIZE 16384, less its header: 16364 bytes of NUL-ended
  // arguments). Past it, new-session fails ("command too long") after the
  // run was recorded: refused here instead, before anything exists. The
  // slack covers tmux's own flags and paths (the cgroup's directory).
  constexpr size_t kTmuxCommandBytes = 16364;
  constexpr size_t kSlack = 512;
  LaunchPaths paths = p.inside;
  if (!p.cgroup.empty()) paths.cgroup_procs = "/sys/fs/cgroup/memory" + p.cgroup + "/cgroup.procs";
  size_t bytes = kSlack + spec.cwd.size() + run_id.size();
  for (const std::string& arg : BuildLaunch(spec, paths, options_.pct, p.env).argv) bytes += arg.size() + 1;
  if (bytes <= kTmuxCommandBytes) return Status::Ok();
  size_t agent_bytes = 0;
  if (p.env.whole) {
    for (const auto& [key, value] : p.env.vars) {
      if (!p.env.set_by_gpuctl.contains(key) && !spec.env.contains(key)) agent_bytes += key.size() + value.size() + 2;
    }
  }
  return InvalidArgument("the command and its environment take " + std::to_string(bytes) +
                         " bytes (" + std::to_string(agent_bytes) + " of them gpuctld's own environment, which jobs "
                         "inherit), and tmux carries at most " + std::to_string(kTmuxCommandBytes) +
                         ": put long values in a file (or a --script) and pass its path");
}

Status JobLauncher::Prepare(const JobSpec& spec, const Placement& p, bool rerun) {
  if (Status s = store_.Prepare(spec.name); !s.ok()) return s;
  if (!spec.container.empty()) {
    std::string host_dir = p.log_path.substr(0, p.log_path.rfind('/'));
    if (Status s = sys::EnsureDir(host_dir, 0755); !s.ok()) return s.Wrap("preparing the job inside the container");
    if (Status s = sys::ReplaceSymlink(p.log_path, store_.LogPath(spec.name)); !s.ok()) return s;
  }
  // A rerun starts a fresh log (offsets count from 0); the last run's stays beside it.
  if (rerun && sys::PathExists(p.log_path)) (void)sys::RenameFile(p.log_path, p.log_path + ".prev");
  if (Status s = sys::RemoveFile(p.exit_path); !s.ok()) return s;
  std::vector<std::string> stale = {p.pid_path};
  if (!p.cgroup_gate.empty()) stale.insert(stale.end(), {p.cgroup_gate, p.cgroup_gate + ".pid"});
  for (const std::string& path : stale) {
    if (path.empty()) continue;
    if (Status s = sys::RemoveFile(path); !s.ok()) return s;
  }
  if (Status s = sys::WriteFileAtomic(p.log_path, "", 0640); !s.ok()) return s;
  if (!p.cgroup.empty()) {
    // A leaf cgroup of the run's own: its memory is limited and counted, and
    // stop and the guard can act on every process of the job at once.
    if (Status s = options_.cgroups->CreateCgroup(p.cgroup); !s.ok() && s.code() != ErrorCode::kAlreadyExists) {
      return s.Wrap("creating the job's memory cgroup " + p.cgroup);
    }
    std::optional<uint64_t> limit = spec.mem_limit_bytes ? spec.mem_limit_bytes : options_.default_mem_limit_bytes;
    if (Status s = options_.cgroups->SetMemoryMax(p.cgroup, limit); !s.ok()) {
      return s.Wrap("setting the job's memory limit");
    }
  }
  return Status::Ok();
}

Status JobLauncher::Launch(const JobSpec& spec, const Placement& p, const std::string& run_id) {
  LaunchPaths inside = p.inside;
  if (!p.cgroup.empty()) {
    Result<std::string> dir = options_.cgroups->Directory(p.cgroup);
    if (!dir.ok()) return dir.status();
    inside.cgroup_procs = *dir + "/cgroup.procs";
  }
  sys::TmuxSessionSpec launch = BuildLaunch(spec, inside, options_.pct, p.env);
  launch.env["GPUCTL_RUN_ID"] = run_id;  // the session's, read back at agent start
  return tmux_.NewSession(launch);
}

LiveRun JobLauncher::FindLiveRun(const std::string& name) {
  LiveRun live;
  const std::string session = TmuxSessionName(name);
  if (tmux_.HasSession(session)) {
    live.session = session;
    live.run_id = tmux_.SessionEnvironment(session, "GPUCTL_RUN_ID").value_or("");
    if (Result<Pane> pane = FindPane(session); pane.ok()) live.pane = *pane;
  }
  if (options_.cgroups) {
    // Each run's cgroup is PARENT/NAME@RUN: listed, since a run whose session
    // is gone may have left processes (a setsid'd worker) in it.
    if (Result<std::string> dir = options_.cgroups->Directory(options_.cgroup_parent); dir.ok()) {
      for (const std::string& child : sys::ListDirectoryNames(*dir)) {
        if (child.starts_with(name + "@")) live.cgroups.push_back(options_.cgroup_parent + "/" + child);
      }
    }
  }
  return live;
}

std::string JobLauncher::DefaultContainerCwd(const std::string& vmid) const {
  // The client's directory means nothing inside the container: root's home
  // when the container has one, else its root.
  return sys::IsDirectory(HostPathForContainer(vmid, "/root")) ? "/root" : "/";
}

Result<Pane> JobLauncher::FindPane(const std::string& session) {
  Result<int64_t> pid = tmux_.PanePid(session);
  if (!pid.ok()) return pid.status();
  return Pane{.pid = *pid, .start_time = processes_.StartTime(*pid)};
}

}  // namespace gpuctl::train
