#include "agents/train/log_tail.h"

#include <algorithm>

#include "agents/sys/files.h"
#include "common/utf8.h"

namespace gpuctl::train {

std::vector<std::string> LastLogLines(std::string_view text, bool starts_mid_line, size_t max_lines) {
  std::vector<std::string> lines;  // newest first while collecting
  size_t end = text.size();
  while (end > 0 && lines.size() < max_lines) {
    size_t start = text.rfind('\n', end - 1);
    const bool first = start == std::string_view::npos;
    start = first ? 0 : start + 1;
    if (first && starts_mid_line) break;
    std::string_view line = text.substr(start, end - start);
    while (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (size_t cr = line.rfind('\r'); cr != std::string_view::npos) line.remove_prefix(cr + 1);
    if (!line.empty()) {
      std::string kept = line.size() > kLogTailLineBytes
                             ? "..." + std::string(line.substr(line.size() - kLogTailLineBytes))
                             : std::string(line);
      lines.push_back(SanitizeUtf8(kept));
    }
    if (first) break;
    end = start - 1;
  }
  std::reverse(lines.begin(), lines.end());
  return lines;
}

std::vector<std::string> ReadLogTail(const std::string& path) {
  if (path.empty()) return {};
  Result<uint64_t> size_now = sys::RegularFileSize(path);
  if (!size_now.ok()) return {};
  const uint64_t size = *size_now;
  const uint64_t offset = size > kLogTailReadBytes ? size - kLogTailReadBytes : 0;
  Result<std::string> text = sys::ReadRegularFileRange(path, offset, kLogTailReadBytes);
  if (!text.ok()) return {};
  return LastLogLines(*text, offset > 0);
}

}  // namespace gpuctl::train
