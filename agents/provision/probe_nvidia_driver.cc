#include "agents/provision/probe_nvidia_driver.h"

#include <cctype>
#include <vector>

#include "agents/sys/text_fields.h"

namespace gpuctl::provision {
namespace {

using sys::Trim;
using sys::Words;

bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

}  // namespace

bool IsDottedVersion(std::string_view text) {
  if (text.empty() || !IsDigit(text.front()) || !IsDigit(text.back())) return false;
  bool dot = false;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '.') {
      if (text[i - 1] == '.') return false;
      dot = true;
    } else if (!IsDigit(text[i])) {
      return false;
    }
  }
  return dot;
}

std::optional<NvidiaKernelModule> ParseNvidiaKernelModule(std::string_view text) {
  constexpr std::string_view kPrefix = "NVRM version:";
  size_t start = text.find(kPrefix);
  if (start == std::string_view::npos) return std::nullopt;
  std::string_view line = text.substr(start + kPrefix.size());
  line = line.substr(0, line.find('\n'));
  bool open = false;
  for (std::string_view word : Words(line)) {
    if (IsDottedVersion(word)) return NvidiaKernelModule{.version = std::string(word), .open = open};
    if (word == "Open") open = true;
  }
  return std::nullopt;
}

std::optional<std::string> ParseModuleVersionFile(std::string_view text) {
  text = Trim(text);
  if (!IsDottedVersion(text)) return std::nullopt;
  return std::string(text);
}

std::optional<std::string> NvmlLibraryVersionFromFileName(std::string_view file_name) {
  constexpr std::string_view kPrefix = "libnvidia-ml.so.";
  if (file_name.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  std::string_view version = file_name.substr(kPrefix.size());
  if (!IsDottedVersion(version)) return std::nullopt;
  return std::string(version);
}

std::optional<std::string> ParseNvidiaSmiDriverVersion(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line = Trim(text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos));
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    if (line.empty()) continue;
    if (!IsDottedVersion(line)) return std::nullopt;  // an error message, not a version
    return std::string(line);
  }
  return std::nullopt;
}

}  // namespace gpuctl::provision
