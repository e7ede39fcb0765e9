#include "agents/sys/nvidia_smi_gpu_reader.h"

#include <optional>
#include <string_view>
#include <utility>

#include "agents/sys/command_runner.h"
#include "agents/sys/nvidia_smi_refusal.h"

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

// Both streams, lines intact, for the refusal parsers.
std::string Output(const CommandOutput& out) { return out.stdout_text + "\n" + out.stderr_text; }

void AddError(GpuReport& report, const std::string& error) {
  report.error += (report.error.empty() ? "" : "; ") + error;
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
    return runner_.Run({executable_, "--query-gpu=" + JoinQueryFields(gpu_fields_), kFormat}, options);
  };

  // An older nvidia-smi refuses the whole query for one field it does not
  // know, and names it: ask again without it (or by its old name), and keep
  // the smaller list (the driver will not change under us). Each retry drops
  // a refusable field, so this ends.
  Result<CommandOutput> gpu = query_gpu();
  while (gpu.ok() && gpu->exit_code != 0) {
    std::optional<std::string> refused = RefusedQueryField(Output(*gpu));
    if (!refused || !DropRefusedField(gpu_fields_, *refused)) break;
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
  auto devices = ParseGpuQueryCsv(gpu->stdout_text, gpu_fields_);
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
    AddError(report, "nvidia-smi --query-compute-apps: " + apps.status().message());
  } else if (apps->exit_code != 0) {
    AddError(report, "nvidia-smi --query-compute-apps: " + Failure(*apps));
  } else if (auto parsed = ParseComputeAppsCsv(apps->stdout_text); !parsed.ok()) {
    AddError(report, "cannot parse nvidia-smi output: " + parsed.status().message());
  } else {
    AttachComputeApps(report.devices, *parsed);
  }
  if (!report.devices.empty() && !remapped_rows_refused_) ReadRemappedRows(report, options);
  return report;
}

void NvidiaSmiGpuReader::ReadRemappedRows(GpuReport& report, const RunOptions& options) {
  const std::string query = "--query-remapped-rows=" + JoinQueryFields(RemappedRowsQueryFields());
  Result<CommandOutput> rows = runner_.Run({executable_, query, kFormat}, options);
  if (!rows.ok()) {
    AddError(report, "nvidia-smi --query-remapped-rows: " + rows.status().message());
  } else if (rows->exit_code != 0) {
    // An nvidia-smi before R450 has no such switch: the values stay unknown,
    // which is not a failure, and it is not asked again.
    if (RefusesOption(Output(*rows), "--query-remapped-rows") || RefusedQueryField(Output(*rows))) {
      remapped_rows_refused_ = true;
    } else {
      AddError(report, "nvidia-smi --query-remapped-rows: " + Failure(*rows));
    }
  } else if (auto parsed = ParseRemappedRowsCsv(rows->stdout_text); !parsed.ok()) {
    AddError(report, "cannot parse nvidia-smi output: " + parsed.status().message());
  } else {
    AttachRemappedRows(report.devices, *parsed);
  }
}

}  // namespace gpuctl::sys
