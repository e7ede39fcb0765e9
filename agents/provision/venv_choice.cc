#include "agents/provision/venv_choice.h"

#include <charconv>

namespace gpuctl::provision {

std::optional<std::string> UsableSystemPython(std::string_view version) {
  int major = 0, minor = 0;
  const char* end = version.data() + version.size();
  auto [after_major, e1] = std::from_chars(version.data(), end, major);
  if (e1 != std::errc() || after_major == end || *after_major != '.') return std::nullopt;
  auto [after_minor, e2] = std::from_chars(after_major + 1, end, minor);
  if (e2 != std::errc() || (after_minor != end && *after_minor != '.')) return std::nullopt;
  if (major != 3 || minor < 10 || minor > 13) return std::nullopt;
  return std::to_string(major) + "." + std::to_string(minor);
}

std::string ManagedPythonDir(std::string_view venv_path) {
  std::string venv(venv_path);
  while (venv.size() > 1 && venv.back() == '/') venv.pop_back();
  size_t slash = venv.rfind('/');
  std::string parent = slash == std::string::npos || slash == 0 ? "" : venv.substr(0, slash);
  return parent + "/python";
}

}  // namespace gpuctl::provision
