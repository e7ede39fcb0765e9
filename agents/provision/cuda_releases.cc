#include "agents/provision/cuda_releases.h"

#include <array>
#include <charconv>

namespace gpuctl::provision {
namespace {

// The toolkit releases, from NVIDIA's CUDA release notes, compiled 2026-12
// (NVIDIA's repositories cannot be listed from where this was written).
// There never was a 12.7.
constexpr std::array<CudaVersion, 21> kReleases{{{11, 0}, {11, 1}, {11, 2}, {11, 3}, {11, 4}, {11, 5}, {11, 6},
                                                 {11, 7}, {11, 8}, {12, 0}, {12, 1}, {12, 2}, {12, 3}, {12, 4},
                                                 {12, 5}, {12, 6}, {12, 8}, {12, 9}, {13, 0}, {13, 1}, {13, 2}}};

// What each repository serves, by the release notes' supported
// distributions: a distribution joins with a release and leaves with one.
struct RepoRange {
  std::string_view name;
  CudaVersion first;
  std::optional<CudaVersion> last;
};
constexpr std::array<RepoRange, 6> kRepos{{
    {"ubuntu2004", {11, 0}, CudaVersion{12, 9}},  // CUDA 13 dropped Ubuntu 20.04
    {"debian11", {11, 0}, CudaVersion{12, 9}},    // and Debian 11
    {"ubuntu2204", {11, 7}, std::nullopt},
    {"ubuntu2404", {12, 5}, std::nullopt},
    {"debian12", {12, 0}, std::nullopt},
    {"debian13", {13, 0}, std::nullopt},
}};

bool Before(CudaVersion a, CudaVersion b) { return a.major != b.major ? a.major < b.major : a.minor < b.minor; }

std::string Choices(const RepoRange& repo) {
  // The newest release of each major the repository serves.
  std::string text;
  for (int major = 11; major <= 13; ++major) {
    std::optional<CudaVersion> newest;
    for (CudaVersion v : kReleases) {
      if (v.major != major || Before(v, repo.first) || (repo.last && Before(*repo.last, v))) continue;
      newest = v;
    }
    if (newest) text += (text.empty() ? "" : ", ") + FormatCudaVersion(*newest);
  }
  return text;
}

}  // namespace

CudaVersion NewestKnownCuda() { return kReleases.back(); }

Status CheckCudaToolkitExists(std::string_view repo_name, CudaVersion version) {
  const CudaVersion newest = kReleases.back();
  bool released = Before(newest, version);  // newer than the table: the repository decides
  for (CudaVersion v : kReleases) released = released || v == version;
  if (!released) {
    return FailedPrecondition("--cuda " + FormatCudaVersion(version) + ": NVIDIA never released that CUDA version" +
                           (version.major == 12 && version.minor == 7 ? " (12.6 was followed by 12.8)" : ""));
  }
  for (const RepoRange& repo : kRepos) {
    if (repo.name != repo_name) continue;
    if (Before(version, repo.first) || (repo.last && Before(*repo.last, version))) {
      return FailedPrecondition("--cuda " + FormatCudaVersion(version) + ": NVIDIA's " + std::string(repo_name) +
                             " repository serves CUDA " + FormatCudaVersion(repo.first) + " to " +
                             (repo.last ? FormatCudaVersion(*repo.last) : std::string("the newest")) +
                             "; newest of each major there: " + Choices(repo));
    }
  }
  return Status::Ok();
}

Status CheckCudaAgainstDriver(CudaVersion version, const std::optional<std::string>& driver) {
  if (!driver || version.major < 13) return Status::Ok();
  int branch = 0;
  auto [end, ec] = std::from_chars(driver->data(), driver->data() + driver->size(), branch);
  if (ec != std::errc() || end == driver->data()) return Status::Ok();  // unreadable: the install will tell
  if (branch >= 580) return Status::Ok();
  return FailedPrecondition("--cuda " + FormatCudaVersion(version) + " needs the 580 driver branch or later, and the " +
                         "loaded driver is " + *driver + ": use --cuda 12.9 (and the cu128 torch index), or upgrade "
                         "the driver first (on an LXC guest, the Proxmox host's)");
}

Status CheckCudaAgainstGpus(CudaVersion version, const std::vector<std::string>& compute_capabilities) {
  if (version.major < 13 || !AnyBeforeTuring(compute_capabilities)) return Status::Ok();
  std::string capabilities;
  for (const std::string& cc : compute_capabilities) capabilities += (capabilities.empty() ? "" : ", ") + cc;
  return FailedPrecondition("--cuda " + FormatCudaVersion(version) +
                            ": CUDA 13 does not support GPUs before Turing (compute capability < 7.5; here " +
                            capabilities + "): use --cuda 12.9 (the cu126 torch index is chosen for them)");
}

}  // namespace gpuctl::provision
