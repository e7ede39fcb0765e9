#include "agents/sys/boot_id.h"

#include "agents/sys/files.h"

namespace gpuctl::sys {

std::string BootId() {
  Result<std::string> text = ReadFileRange("/proc/sys/kernel/random/boot_id", 0, 64);
  if (!text.ok()) return {};
  std::string id = std::move(text).value();
  while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
  return id;
}

}  // namespace gpuctl::sys
