#include "agents/train/job_environment.h"

#include "agents/sys/files.h"

namespace gpuctl::train {
namespace {

// A name env(1) and a shell can take: one starting with '-' would read as
// an option of env, and sh drops names it cannot hold anyway.
bool PortableVariableName(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  for (char c : name) {
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

}  // namespace

bool IsAgentOnlyVariable(std::string_view name) {
  static constexpr std::string_view kPrefixes[] = {"GPUCTLD_", "WATCHDOG_", "LISTEN_"};
  for (std::string_view prefix : kPrefixes) {
    if (name.starts_with(prefix)) return true;
  }
  return name == "NOTIFY_SOCKET" || name == "TMUX" || name == "TMUX_PANE";
}

bool IsRunVariable(std::string_view name) {
  static constexpr std::string_view kNames[] = {"GPUCTL_JOB",     "GPUCTL_RUN_ID",      "GPUCTL_ATTEMPT",
                                                "GPUCTL_ANCHORS", "GPUCTL_RESUME_FROM", "GPUCTL_BUILD_BUDGET"};
  for (std::string_view run_name : kNames) {
    if (name == run_name) return true;
  }
  return name.starts_with("GPUCTL_MULTINODE_");
}

JobEnvironment BuildJobEnvironment(const EnvMap& agent_env, const JobSpec& spec, const EnvMap& run_vars) {
  JobEnvironment out;
  out.whole = spec.container.empty();
  if (out.whole) {
    for (const auto& [key, value] : agent_env) {
      if (!IsAgentOnlyVariable(key) && !IsRunVariable(key) && PortableVariableName(key)) out.vars.emplace(key, value);
    }
    if (auto path = out.vars.find("PATH"); path == out.vars.end() || path->second.empty()) {
      if (!spec.env.contains("PATH")) out.set_by_gpuctl["PATH"] = std::string(kDefaultJobPath);
      out.vars["PATH"] = std::string(kDefaultJobPath);
    }
  }
  EnvMap ours = EffectiveEnv(spec);
  for (const auto& [key, value] : run_vars) ours[key] = value;
  for (const auto& [key, value] : ours) {
    out.vars[key] = value;
    auto given = spec.env.find(key);
    if (given == spec.env.end() || given->second != value) out.set_by_gpuctl[key] = value;
  }
  return out;
}

namespace {

std::string AgainstCwd(const std::string& path, const std::string& cwd) {
  if (path.starts_with('/') || cwd.empty()) return path;
  return cwd + (cwd.ends_with('/') ? "" : "/") + path;
}

}  // namespace

Status CheckCommandResolves(const JobSpec& spec, const JobEnvironment& env) {
  if (!spec.container.empty() || !spec.script.empty()) return Status::Ok();
  std::vector<std::string> argv = EffectiveCommand(spec);
  if (argv.empty()) return Status::Ok();  // ValidateJobSpec's to refuse
  const std::string& program = argv.front();
  if (program.find('/') != std::string::npos) {
    std::string path = AgainstCwd(program, spec.cwd);
    if (!sys::PathExists(path)) {
      return InvalidArgument("command '" + program + "': no such file" +
                             (program.starts_with('/') ? "" : " (in --cwd " + spec.cwd + ")"));
    }
    // chmod +x is the fix for a plain file only.
    if (sys::IsDirectory(path)) return InvalidArgument("command '" + program + "' is a directory");
    if (Result<uint64_t> size = sys::FileSize(path); !size.ok()) {
      return InvalidArgument("command '" + program + "' is a link that leads nowhere (" + size.status().message() + ")");
    }
    if (!sys::IsExecutableFile(path)) {
      return InvalidArgument("command '" + program + "' is not an executable file (chmod +x " + program + ")");
    }
    return Status::Ok();
  }
  auto found = env.vars.find("PATH");
  const std::string path_list = found == env.vars.end() ? "" : found->second;
  // Each entry as the job would see it: a relative one (or an empty one,
  // meaning ".") against the job's directory, not the agent's.
  std::string resolved_list;
  size_t start = 0;
  while (start <= path_list.size()) {
    size_t end = path_list.find(':', start);
    if (end == std::string::npos) end = path_list.size();
    std::string dir = path_list.substr(start, end - start);
    if (start > 0) resolved_list += ':';
    resolved_list += AgainstCwd(dir.empty() ? "." : dir, spec.cwd);
    start = end + 1;
  }
  if (sys::FindOnPath(program, resolved_list)) return Status::Ok();
  return InvalidArgument("command '" + program + "' not found on the job's PATH (" + path_list +
                         "); give its full path, or set PATH with --env");
}

}  // namespace gpuctl::train
