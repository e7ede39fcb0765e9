#include "agents/provision/torch_index.h"

#include <array>
#include <charconv>

namespace gpuctl::provision {
namespace {

struct ReleaseIndexes {
  int minor_from;  // torch 2.<minor_from> and later, up to the next row
  std::array<const char*, 3> tags;
};
// PyTorch's release matrix (see the header), oldest first.
constexpr std::array<ReleaseIndexes, 6> kReleases{{
    {5, {"cu118", "cu121", "cu124"}},
    {6, {"cu118", "cu124", "cu126"}},
    {7, {"cu118", "cu126", "cu128"}},
    {8, {"cu126", "cu128", "cu129"}},
    {9, {"cu126", "cu128", "cu130"}},
    {12, {"cu126", "cu130", "cu132"}},
}};

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

std::vector<std::string> TorchIndexTags(std::string_view torch_version) {
  // "2.10.0", "2.10", "2.10.0.post1": the major and minor decide.
  size_t dot = torch_version.find('.');
  if (dot == std::string_view::npos) return {};
  std::string_view rest = torch_version.substr(dot + 1);
  auto major = ParseNumber(torch_version.substr(0, dot));
  auto minor = ParseNumber(rest.substr(0, rest.find('.')));
  if (!major || !minor) return {};
  if (*major > 2) return {kReleases.back().tags.begin(), kReleases.back().tags.end()};
  if (*major < 2) return {};
  const ReleaseIndexes* found = nullptr;
  for (const ReleaseIndexes& release : kReleases) {
    if (*minor >= release.minor_from) found = &release;
  }
  if (!found) return {};
  return {found->tags.begin(), found->tags.end()};
}

std::optional<std::string> TorchIndexTagFor(std::string_view torch_version, CudaVersion toolkit, bool pre_turing) {
  std::optional<CudaVersion> best, oldest_same_major;
  for (const std::string& tag : TorchIndexTags(torch_version)) {
    std::optional<CudaVersion> index = CudaVersionOfIndexTag(tag);
    if (!index || index->major != toolkit.major) continue;
    // GPUs before Turing: cu130 needs Turing, cu128 dropped Maxwell and Pascal
    // (torch 2.8) then Volta (2.11); cu126 and older keep them all.
    if (pre_turing && (index->major > 12 || (index->major == 12 && index->minor >= 8))) continue;
    if (!oldest_same_major) oldest_same_major = index;
    if (index->minor <= toolkit.minor) best = index;
  }
  if (!best) best = oldest_same_major;
  if (!best) return std::nullopt;
  return "cu" + std::to_string(best->major) + std::to_string(best->minor);
}

std::string TorchIndexChoices(std::string_view torch_version) {
  std::vector<std::string> tags = TorchIndexTags(torch_version);
  if (tags.empty()) return "gpuctl knows the CUDA indexes of torch 2.5 and later only";
  std::string text = "torch " + std::string(torch_version) + " is published for";
  for (size_t i = 0; i < tags.size(); ++i) text += (i ? ", " : " ") + tags[i];
  return text;
}

bool AnyBeforeTuring(const std::vector<std::string>& compute_capabilities) {
  for (const std::string& capability : compute_capabilities) {
    std::optional<CudaVersion> cc = ParseCudaVersion(capability);  // same MAJOR.MINOR form
    if (cc && (cc->major < 7 || (cc->major == 7 && cc->minor < 5))) return true;
  }
  return false;
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
