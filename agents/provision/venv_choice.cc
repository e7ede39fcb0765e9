#include "agents/provision/venv_choice.h"

#include "agents/provision/torch_index.h"

namespace gpuctl::provision {

std::optional<std::string> UsableSystemPython(std::string_view version) {
  // Python's versions have CUDA's MAJOR.MINOR[.PATCH] form.
  std::optional<CudaVersion> v = ParseCudaVersion(version);
  if (!v || v->major != 3 || v->minor < 10 || v->minor > 13) return std::nullopt;
  return FormatCudaVersion(*v);
}

std::string ManagedPythonDir(std::string_view venv_path) {
  std::string venv(venv_path);
  while (venv.size() > 1 && venv.back() == '/') venv.pop_back();
  size_t slash = venv.rfind('/');
  std::string parent = slash == std::string::npos || slash == 0 ? "" : venv.substr(0, slash);
  return parent + "/python";
}

}  // namespace gpuctl::provision
