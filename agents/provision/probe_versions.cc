#include "agents/provision/probe_versions.h"

#include <cctype>

#include <nlohmann/json.hpp>

#include "agents/provision/probe_nvidia_driver.h"
#include "agents/sys/text_fields.h"

namespace gpuctl::provision {
namespace {

using sys::Trim;

// The word after `keyword` (a whole word, followed by spaces) when it is a
// dotted version, with an optional trailing "+local" or pre-release tail.
std::optional<std::string> VersionAfter(std::string_view text, std::string_view keyword) {
  size_t pos = 0;
  while ((pos = text.find(keyword, pos)) != std::string_view::npos) {
    bool word_start = pos == 0 || std::isspace(static_cast<unsigned char>(text[pos - 1]));
    size_t after = pos + keyword.size();
    pos = after;
    if (!word_start || after >= text.size() || text[after] != ' ') continue;
    std::string_view rest = Trim(text.substr(after));
    size_t end = 0;
    while (end < rest.size() && !std::isspace(static_cast<unsigned char>(rest[end]))) ++end;
    std::string_view word = rest.substr(0, end);
    size_t numeric = 0;
    while (numeric < word.size() && (std::isdigit(static_cast<unsigned char>(word[numeric])) || word[numeric] == '.')) {
      ++numeric;
    }
    if (IsDottedVersion(word.substr(0, numeric))) return std::string(word);
  }
  return std::nullopt;
}

std::string StringField(const nlohmann::json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

std::optional<NvccRelease> ParseNvccVersion(std::string_view text) {
  constexpr std::string_view kRelease = "release ";
  size_t pos = text.find(kRelease);
  if (pos == std::string_view::npos) return std::nullopt;
  std::string_view rest = text.substr(pos + kRelease.size());
  std::string_view line = rest.substr(0, rest.find('\n'));
  size_t comma = line.find(',');
  std::string_view version = Trim(line.substr(0, comma));
  if (!IsDottedVersion(version)) return std::nullopt;
  NvccRelease release{.version = std::string(version), .build = ""};
  if (comma != std::string_view::npos) {
    std::string_view build = Trim(line.substr(comma + 1));
    if (build.size() > 1 && build[0] == 'V' && IsDottedVersion(build.substr(1))) release.build = std::string(build);
  }
  return release;
}

std::optional<std::string> ParseUvVersion(std::string_view text) { return VersionAfter(text, "uv"); }

std::optional<std::string> ParsePythonVersion(std::string_view text) { return VersionAfter(text, "Python"); }

Result<TorchReport> ParseTorchReport(std::string_view text) {
  text = Trim(text);
  size_t nl = text.rfind('\n');
  std::string_view last = nl == std::string_view::npos ? text : Trim(text.substr(nl + 1));
  nlohmann::json object = nlohmann::json::parse(last, nullptr, /*allow_exceptions=*/false);
  if (!object.is_object() || !object.contains("python")) {
    return InvalidArgument("the venv's python did not print its report; last line: '" + std::string(last) + "'");
  }
  TorchReport report;
  report.python_version = StringField(object, "python");
  report.torch_version = StringField(object, "torch");
  report.torch_cuda = StringField(object, "cuda");  // null for a CPU build
  report.import_error = StringField(object, "error");
  return report;
}

}  // namespace gpuctl::provision
