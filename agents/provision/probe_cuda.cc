// Installed CUDA toolkits: NVIDIA's packages and installer put each in
// /usr/local/cuda-X.Y; an nvcc on PATH (Debian's nvidia-cuda-toolkit, a
// profile.d PATH entry) is reported too, once.
#include <algorithm>

#include "agents/provision/probe_context.h"
#include "agents/provision/probe_versions.h"
#include "agents/sys/directory_listing.h"

namespace gpuctl::provision {
namespace {

std::optional<NvccRelease> RunNvcc(ProbeContext& ctx, const std::string& nvcc, ProbeContext::NoteFailure note) {
  std::optional<sys::CommandOutput> out = ctx.Run({nvcc, "--version"}, note);
  if (!out) return std::nullopt;
  std::optional<NvccRelease> release = ParseNvccVersion(out->stdout_text);
  if (!release) ctx.Note("'" + nvcc + " --version' printed no 'release X.Y'");
  return release;
}

bool AlreadyListed(const HostProbe& probe, const NvccRelease& release) {
  return std::any_of(probe.cuda_toolkits.begin(), probe.cuda_toolkits.end(), [&](const CudaToolkit& toolkit) {
    return toolkit.version == release.version && toolkit.build == release.build;
  });
}

// "/usr/local/cuda-13.0/bin/nvcc" -> "/usr/local/cuda-13.0"; "/opt/nvcc" -> "/opt".
std::string ToolkitHome(const std::string& nvcc) {
  std::string dir = nvcc.substr(0, nvcc.rfind('/'));
  constexpr std::string_view kBin = "/bin";
  if (dir.size() > kBin.size() && dir.compare(dir.size() - kBin.size(), kBin.size(), kBin) == 0) {
    dir.resize(dir.size() - kBin.size());
  }
  return dir;
}

void NoteWhenNone(ProbeContext& ctx) {
  if (ctx.probe.cuda_toolkits.empty()) ctx.Note("no CUDA toolkit (no /usr/local/cuda-*/bin/nvcc, no nvcc on PATH)");
}

}  // namespace

void ProbeCuda(ProbeContext& ctx) {
  for (const std::string& name : sys::ListDirectoryNames(ctx.fs.Path("usr/local"))) {
    if (name.rfind("cuda-", 0) != 0) continue;
    std::string home = "/usr/local/" + name;
    std::string nvcc = home + "/bin/nvcc";
    if (!ctx.Exists(nvcc)) {
      ctx.Note(home + " has no bin/nvcc (a partial install?)");
      continue;
    }
    if (std::optional<NvccRelease> release = RunNvcc(ctx, ctx.fs.Path(nvcc), ProbeContext::NoteFailure::kAlways)) {
      ctx.probe.cuda_toolkits.push_back({.path = home, .version = release->version, .build = release->build});
    }
  }
  // The nvcc on PATH, when it is another toolkit than those above.
  std::string nvcc = sys::FindExecutable("nvcc", ctx.options.path_env);
  std::optional<NvccRelease> release;
  if (!nvcc.empty()) release = RunNvcc(ctx, nvcc, ProbeContext::NoteFailure::kUnlessMissing);
  if (release && !AlreadyListed(ctx.probe, *release)) {
    ctx.probe.cuda_toolkits.push_back({.path = ToolkitHome(nvcc), .version = release->version,
                                       .build = release->build});
  }
  NoteWhenNone(ctx);
}

}  // namespace gpuctl::provision
