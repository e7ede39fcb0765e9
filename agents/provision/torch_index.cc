#include "agents/provision/torch_index.h"

#include <array>
#include <charconv>

namespace gpuctl::provision {
namespace {

// The CUDA builds download.pytorch.org publishes wheels for (recent releases).
constexpr std::array<CudaVersion, 7> kPublishedIndexes{{
    {11, 8}, {12, 1}, {12, 4}, {12, 6}, {12, 8}, {12, 9}, {13, 0}}};

std::optional<int> ParseNumber(std::string_view text) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

}  // namespace

std::optional<CudaVersion> ParseCudaVersion(std::string_view text) {
  size_t dot = text.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  std::string_view rest = text.substr(dot + 1);
  size_t second = rest.find('.');
  if (second != std::string_view::npos) {
    if (!ParseNumber(rest.substr(second + 1))) return std::nullopt;
    rest = rest.substr(0, second);
  }
  auto major = ParseNumber(text.substr(0, dot));
  auto minor = ParseNumber(rest);
  if (!major || !minor || *major <= 0 || *major > 99 || *minor < 0 || *minor > 99) return std::nullopt;
  return CudaVersion{*major, *minor};
}

std::string FormatCudaVersion(CudaVersion v) {
  return std::to_string(v.major) + "." + std::to_string(v.minor);
}

std::optional<std::string> TorchIndexTagForCuda(CudaVersion toolkit) {
  std::optional<CudaVersion> best;
  std::optional<CudaVersion> oldest_same_major;
  for (const CudaVersion& index : kPublishedIndexes) {
    if (index.major != toolkit.major) continue;
    if (!oldest_same_major) oldest_same_major = index;
    if (index.minor <= toolkit.minor) best = index;
  }
  if (!best) best = oldest_same_major;
  if (!best) return std::nullopt;
  return "cu" + std::to_string(best->major) + std::to_string(best->minor);
}

std::string TorchIndexUrl(std::string_view tag) {
  return "https://download.pytorch.org/whl/" + std::string(tag);
}

std::optional<CudaVersion> CudaVersionOfIndexTag(std::string_view tag) {
  if (tag.size() < 4 || tag.substr(0, 2) != "cu") return std::nullopt;
  std::string_view digits = tag.substr(2);
  // The last digit is the minor: cu118 -> 11.8, cu130 -> 13.0.
  auto major = ParseNumber(digits.substr(0, digits.size() - 1));
  auto minor = ParseNumber(digits.substr(digits.size() - 1));
  if (!major || !minor) return std::nullopt;
  return CudaVersion{*major, *minor};
}

}  // namespace gpuctl::provision
