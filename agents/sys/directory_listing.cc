#include "agents/sys/directory_listing.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

namespace gpuctl::sys {

std::vector<std::string> ListDirectoryNames(const std::string& path) {
  std::vector<std::string> names;
  std::error_code ec;
  std::filesystem::directory_iterator it(path, ec);
  for (; !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace gpuctl::sys
