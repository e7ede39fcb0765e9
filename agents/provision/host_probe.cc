#include "agents/provision/host_probe.h"

#include "agents/provision/probe_context.h"
#include "agents/sys/files.h"

namespace gpuctl::provision {
namespace {

std::string Describe(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& arg : argv) {
    if (!out.empty()) out += ' ';
    out += arg;
  }
  return out;
}

std::string FirstLine(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  return line.size() > 200 ? line.substr(0, 200) + "..." : line;
}

}  // namespace

std::optional<sys::CommandOutput> ProbeContext::Run(const std::vector<std::string>& argv, NoteFailure note,
                                                    std::optional<std::chrono::milliseconds> timeout) {
  sys::RunOptions run_options;
  run_options.timeout = timeout.value_or(options.command_timeout);
  run_options.max_output_bytes = 1 << 20;
  Result<sys::CommandOutput> output = runner.Run(argv, run_options);
  if (!output.ok()) {
    bool missing = output.status().code() == ErrorCode::kNotFound;
    if (note == NoteFailure::kAlways || (note == NoteFailure::kUnlessMissing && !missing)) {
      Note("'" + Describe(argv) + "': " + output.status().message());
    }
    return std::nullopt;
  }
  if (output->exit_code != 0) {
    if (note == NoteFailure::kNever) return std::nullopt;
    std::string said = FirstLine(output->stderr_text.empty() ? output->stdout_text : output->stderr_text);
    Note("'" + Describe(argv) + "' exited " +
         (output->exit_code < 0 ? "on signal " + std::to_string(output->term_signal)
                                : std::to_string(output->exit_code)) +
         (said.empty() ? "" : ": " + said));
    return std::nullopt;
  }
  return std::move(output).value();
}

bool ProbeContext::Exists(const std::string& host_path) const { return sys::PathExists(fs.Path(host_path)); }

HostProbe HostProber::Probe(const ProbeOptions& options) const {
  HostProbe probe;
  ProbeContext ctx{.fs = fs_, .runner = runner_, .options = options, .probe = probe};
  ProbeSystem(ctx);
  ProbeGpus(ctx);
  ProbeCuda(ctx);
  ProbePython(ctx);
  return probe;
}

}  // namespace gpuctl::provision
