#include "agents/provision/step_target.h"

#include <algorithm>

#include "agents/sys/files.h"

namespace gpuctl::provision {

StepTarget::StepTarget(sys::CommandRunner& runner, std::string files_root, std::string container,
                       std::string pct)
    : runner_(runner), files_root_(std::move(files_root)), container_(std::move(container)), pct_(std::move(pct)) {}

CommandLine StepTarget::Resolve(const StepAction& action) const {
  if (!in_container()) return CommandLine{action.argv, action.env};
  CommandLine line;
  line.argv = {pct_, "exec", container_, "--"};
  if (!action.env.empty()) {
    line.argv.emplace_back("env");
    for (const auto& [key, value] : action.env) line.argv.push_back(key + "=" + value);
  }
  line.argv.insert(line.argv.end(), action.argv.begin(), action.argv.end());
  return line;
}

Result<sys::CommandOutput> StepTarget::Run(const StepAction& action, std::chrono::milliseconds timeout) const {
  CommandLine line = Resolve(action);
  sys::RunOptions options;
  options.timeout = action.timeout.count() > 0 ? action.timeout : timeout;
  options.env = line.env;
  if (!action.content.empty() && action.write_path.empty()) options.stdin_text = action.content;
  return runner_.Run(line.argv, options);
}

Result<sys::CommandOutput> StepTarget::RunCheck(std::vector<std::string> argv,
                                                std::chrono::milliseconds timeout) const {
  StepAction action;
  action.argv = std::move(argv);
  return Run(action, timeout);
}

std::string StepTarget::HostPath(const std::string& path) const {
  std::string root = files_root_;
  while (!root.empty() && root.back() == '/') root.pop_back();
  return root + path;
}

Status StepTarget::WriteFile(const StepAction& action) const {
  std::string path = HostPath(action.write_path);
  std::string dir = path.substr(0, path.rfind('/'));
  if (Status s = sys::EnsureDir(dir, 0755); !s.ok()) return s;
  return sys::WriteFileAtomic(path, action.content, 0644);
}

std::string FormatCommandLine(const CommandLine& command) {
  auto quote = [](const std::string& arg) {
    bool plain = !arg.empty() && std::all_of(arg.begin(), arg.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             std::string_view("-_./=:,+@%").find(c) != std::string_view::npos;
    });
    if (plain) return arg;
    std::string quoted = "'";
    for (char c : arg) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return quoted + "'";
  };
  std::string text;
  for (const auto& [key, value] : command.env) text += key + "=" + quote(value) + " ";
  for (size_t i = 0; i < command.argv.size(); ++i) text += (i ? " " : "") + quote(command.argv[i]);
  return text;
}

std::string OutputTail(const sys::CommandOutput& output, size_t max_lines) {
  std::string all = output.stdout_text;
  if (!all.empty() && all.back() != '\n' && !output.stderr_text.empty()) all += '\n';
  all += output.stderr_text;
  while (!all.empty() && (all.back() == '\n' || all.back() == ' ')) all.pop_back();
  size_t pos = all.size();
  for (size_t lines = 0; lines < max_lines && pos != std::string::npos && pos > 0; ++lines) {
    pos = all.rfind('\n', pos - 1);
  }
  return pos == std::string::npos || pos == 0 ? all : all.substr(pos + 1);
}

}  // namespace gpuctl::provision
