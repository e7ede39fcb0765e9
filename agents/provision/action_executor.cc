#include "agents/provision/action_executor.h"

namespace gpuctl::provision {
namespace {

std::optional<StepFailure> RunOne(const StepContext& context, const StepAction& action) {
  StepFailure failure;
  failure.command = DescribeAction(context, action);
  if (action.argv.empty()) {
    Status written = context.target.WriteFile(action);
    if (written.ok()) return std::nullopt;
    failure.message = "writing " + action.write_path + " failed: " + written.message();
    return failure;
  }

  auto run = [&]() -> Result<sys::CommandOutput> {
    if (!action.guarded || context.builds == nullptr) return context.target.Run(action, context.config.apply_timeout);
    GuardedBuild build;
    build.name = "provision-" + std::string(kStepExt) + "-" + context.options.ext;
    build.argv = action.argv;
    build.env = action.env;
    build.container = context.target.container();
    build.mem_limit_bytes = action.mem_limit_bytes;
    build.timeout = action.timeout.count() > 0 ? action.timeout : context.config.build_timeout;
    return context.builds->Run(build);
  };
  Result<sys::CommandOutput> out = run();
  if (!out.ok()) {
    failure.message = out.status().message();
    return failure;
  }
  if (out->exit_code == 0) return std::nullopt;
  failure.exit_code = out->exit_code;
  failure.term_signal = out->term_signal;
  failure.output_tail = OutputTail(*out);
  failure.message = "'" + FormatCommandLine(failure.command) + "' " +
                    (out->term_signal != 0 ? "was killed by signal " + std::to_string(out->term_signal)
                                           : "exited with status " + std::to_string(out->exit_code));
  return failure;
}

}  // namespace

CommandLine DescribeAction(const StepContext& context, const StepAction& action) {
  if (action.argv.empty()) return CommandLine{{"write", context.target.HostPath(action.write_path)}, {}};
  if (action.guarded && context.builds != nullptr) {
    // A guarded build: the job runs argv itself (through pct exec in a container).
    return CommandLine{action.argv, action.env};
  }
  return context.target.Resolve(action);
}

std::optional<StepFailure> ExecuteActions(const StepContext& context, const std::vector<StepAction>& actions,
                                          const std::function<bool()>& cancelled) {
  for (const StepAction& action : actions) {
    if (cancelled()) {
      StepFailure stopped;
      stopped.command = DescribeAction(context, action);
      stopped.message = "cancelled before '" + FormatCommandLine(stopped.command) + "'; rerun to continue";
      return stopped;
    }
    if (auto failure = RunOne(context, action)) return failure;
  }
  return std::nullopt;
}

}  // namespace gpuctl::provision
