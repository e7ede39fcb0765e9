#include "agents/sys/directory_listing.h"

#include <dirent.h>
#include <fcntl.h>

#include <algorithm>

#include "agents/sys/confined_root.h"

namespace gpuctl::sys {

std::vector<std::string> ListDirectoryNames(const std::string& path) {
  std::vector<std::string> names;
  // Opened through OpenPath: beneath a container's root, resolved inside it
  // (a planted link never lists a host directory).
  Result<UniqueFd> fd = OpenPath(path, O_RDONLY | O_DIRECTORY);
  if (!fd.ok()) return names;
  DIR* dir = ::fdopendir(fd->get());
  if (dir == nullptr) return names;
  fd->Release();  // the DIR owns it now
  while (const dirent* entry = ::readdir(dir)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(std::move(name));
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace gpuctl::sys
