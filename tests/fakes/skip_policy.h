// When a test may skip. A test that cannot run here says why and skips; but
// under CI=true a skip for want of something scripts/install-deps.sh --test
// installs (a tool, root, a container that the installed packages can make)
// would leave CI green while the test never ran, so there it fails instead.
// Only the reasons named in SkipAllowed may skip under CI too: what no
// install script can provide. tests/skip_policy.sh is the same rule for the
// shell tests; scripts/test.sh lists every skip at the end.
//
//   GPUCTL_SKIP() << "tmux is not installed";                   // fails under CI=true
//   GPUCTL_SKIP_ALLOWED(kGpu) << "this host has an NVIDIA driver";    // skips everywhere
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string_view>

namespace gpuctl::testing {

enum class SkipAllowed {
  kGpu,                 // a GPU (or its absence), its driver, or NVIDIA's CUDA toolkit: not in Debian's archive
  kArchiveUnreachable,  // the Debian archive or the package index pip uses cannot be reached
  kPlatform,            // the machine itself: cgroup version, swap, kernel features, page size
};

inline const char* SkipAllowedName(SkipAllowed why) {
  switch (why) {
    case SkipAllowed::kGpu: return "[allowed: GPU] ";
    case SkipAllowed::kArchiveUnreachable: return "[allowed: archive unreachable] ";
    case SkipAllowed::kPlatform: return "[allowed: platform] ";
  }
  return "";
}

inline bool SkipsFail() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string_view(ci) == "true";
}

}  // namespace gpuctl::testing

// A skip that becomes a fatal failure under CI=true. Stream the reason after
// it, as with GTEST_SKIP(); it returns from the current function.
#define GPUCTL_SKIP()                                                                              \
  return GTEST_MESSAGE_AT_(__FILE__, __LINE__,                                                     \
                           ::gpuctl::testing::SkipsFail()                                          \
                               ? "CI=true: a test may not skip for want of what "                  \
                                 "scripts/install-deps.sh --test installs; it would have skipped:" \
                               : "",                                                               \
                           ::gpuctl::testing::SkipsFail() ? ::testing::TestPartResult::kFatalFailure \
                                                          : ::testing::TestPartResult::kSkip)

// A skip for a reason no install script can provide (SkipAllowed).
#define GPUCTL_SKIP_ALLOWED(why) GTEST_SKIP() << ::gpuctl::testing::SkipAllowedName(::gpuctl::testing::SkipAllowed::why)
