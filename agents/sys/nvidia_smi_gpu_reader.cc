#include "agents/sys/nvidia_smi_gpu_reader.h"

#include <string_view>
#include <utility>

#include "agents/sys/command_runner.h"

namespace gpuctl::sys {
namespace {

constexpr const char* kFormat = "--format=csv,noheader,nounits";
// What nvidia-smi prints (exit code 6) on a host whose driver sees no GPU.
constexpr std::string_view kNoDevices = "No devices were found";

// nvidia-smi's own words, on one line: it prints failures on stdout (some
// versions on stderr), sometimes over several lines ("Failed to initialize
// NVML: Driver/library version mismatch" then "NVML library version: 580.95").
std::string Message(const CommandOutput& out) {
  std::string joined;
  for (const std::string* text : {&out.stdout_text, &out.stderr_text}) {
    std::string_view rest = *text;
    while (!rest.empty()) {
      size_t end = rest.find('\n');
      std::string_view line = rest.substr(0, end);
      while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
      while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
      if (!line.empty()) joined += (joined.empty() ? "" : "; ") + std::string(line);
      if (end == std::string_view::npos) break;
      rest.remove_prefix(end + 1);
    }
  }
  return joined;
}

std::string Failure(const CommandOutput& out) {
  std::string message = Message(out);
  if (!message.empty()) return message;
  if (out.term_signal != 0) return "nvidia-smi was killed by signal " + std::to_string(out.term_signal);
  return "nvidia-smi exited with code " + std::to_string(out.exit_code) + " and printed nothing";
}

// 'Field "clocks_event_reasons.active" is not a valid field to query.'
bool RejectsEventReasonsField(const CommandOutput& out) {
  std::string message = Message(out);
  return message.find("is not a valid field to query") != std::string::npos &&
         message.find("clocks_event_reasons.active") != std::string::npos;
}

}  // namespace

NvidiaSmiGpuReader::NvidiaSmiGpuReader(std::string executable, CommandRunner& runner,
                                       std::chrono::milliseconds timeout)
    : executable_(std::move(executable)), runner_(runner), timeout_(timeout) {}

GpuReport NvidiaSmiGpuReader::Read() {
  GpuReport report;
  RunOptions options;
  options.timeout = timeout_;
  auto query_gpu = [&] {
    return runner_.Run(
        {executable_, "--query-gpu=" + JoinQueryFields(GpuQueryFields(reasons_field_)), kFormat}, options);
  };

  Result<CommandOutput> gpu = query_gpu();
  if (gpu.ok() && gpu->exit_code != 0 && reasons_field_ == ClockReasonsField::kEvent &&
      RejectsEventReasonsField(*gpu)) {
    reasons_field_ = ClockReasonsField::kThrottle;  // remembered: the driver will not change under us
    gpu = query_gpu();
  }
  if (!gpu.ok()) {
    report.error = gpu.status().message();
    return report;
  }
  if (gpu->exit_code != 0) {
    report.error = Failure(*gpu);
    // A driver that answers but sees no GPU is a working source.
    if (report.error == kNoDevices) report.source = GpuSourceKind::kNvidiaSmi;
    return report;
  }
  auto devices = ParseGpuQueryCsv(gpu->stdout_text, GpuQueryFields(reasons_field_));
  if (!devices.ok()) {
    report.error = "cannot parse nvidia-smi output: " + devices.status().message();
    return report;
  }
  report.source = GpuSourceKind::kNvidiaSmi;
  report.devices = std::move(*devices);
  if (report.devices.empty()) report.error = std::string(kNoDevices);

  // Without the process list the GPU values are still worth reporting.
  Result<CommandOutput> apps = runner_.Run(
      {executable_, "--query-compute-apps=" + JoinQueryFields(ComputeAppsQueryFields()), kFormat},
      options);
  if (!apps.ok()) {
    report.error = "nvidia-smi --query-compute-apps: " + apps.status().message();
  } else if (apps->exit_code != 0) {
    report.error = "nvidia-smi --query-compute-apps: " + Failure(*apps);
  } else if (auto parsed = ParseComputeAppsCsv(apps->stdout_text); !parsed.ok()) {
    report.error = "cannot parse nvidia-smi output: " + parsed.status().message();
  } else {
    AttachComputeApps(report.devices, *parsed);
  }
  return report;
}

}  // namespace gpuctl::sys
