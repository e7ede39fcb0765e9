// Versions of the build tools a provisioning plan depends on, parsed from
// what the tools print. Pure: text in, versions out.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace gpuctl::provision {

// `nvcc --version`, whose last lines read
//   Cuda compilation tools, release 13.0, V13.0.88
//   Build cuda_13.0.r13.0/compiler.36424714_0
struct NvccRelease {
  std::string version;  // "13.0"
  std::string build;    // "V13.0.88"; empty when not printed
};
std::optional<NvccRelease> ParseNvccVersion(std::string_view text);

// `uv --version`: "uv 0.8.17 (10960bc13 2025-09-10)" -> "0.8.17".
std::optional<std::string> ParseUvVersion(std::string_view text);

// `python3 --version`: "Python 3.11.2" -> "3.11.2" (Python 2 printed it on
// stderr; callers pass both streams).
std::optional<std::string> ParsePythonVersion(std::string_view text);

// What kTorchReportScript prints: one JSON object on the last non-empty line
// (imports may print warnings before it).
struct TorchReport {
  std::string python_version;  // "3.12.3"
  std::string torch_version;   // "2.11.0+cu130"; empty when torch did not import
  std::string torch_cuda;      // torch.version.cuda: "13.0"; empty for a CPU build
  std::string import_error;    // why torch did not import
};
// Errors: kInvalidArgument when the last line is not such an object.
Result<TorchReport> ParseTorchReport(std::string_view text);

// Run as `VENV/bin/python -c kTorchReportScript`.
inline constexpr const char* kTorchReportScript =
    "import json, sys\n"
    "r = {'python': sys.version.split()[0]}\n"
    "try:\n"
    "    import torch\n"
    "    r['torch'] = torch.__version__\n"
    "    r['cuda'] = torch.version.cuda\n"
    "except Exception as e:\n"
    "    r['error'] = type(e).__name__ + ': ' + str(e)\n"
    "print(json.dumps(r))\n";

}  // namespace gpuctl::provision
