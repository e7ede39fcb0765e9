#include "agents/train/pid_file.h"

#include <charconv>
#include <string_view>

#include "agents/sys/confined_root.h"
#include "agents/sys/files.h"

namespace gpuctl::train {

std::optional<int64_t> HostPidFromPidFile(sys::ProcessControl& processes, const std::string& path, int64_t* written) {
  Result<std::string> text = sys::ReadRegularFile(path, 32);
  if (!text.ok()) return std::nullopt;  // not written yet
  std::string_view digits(*text);
  while (!digits.empty() && digits.back() == '\n') digits.remove_suffix(1);
  int64_t number = 0;
  auto [end, err] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
  // Zero-padded is fine: a full disk makes the wrapper write over a spare.
  if (err != std::errc() || end != digits.data() + digits.size() || number <= 0) return std::nullopt;
  if (written) *written = number;
  // Beneath a container's root: the container's number, mapped to the host's.
  if (std::optional<sys::ConfinedPath> where = sys::FindConfinedRoot(path)) {
    return processes.HostPidInContainer(where->root, number);
  }
  if (!processes.Alive(number)) return std::nullopt;
  return number;
}

}  // namespace gpuctl::train
