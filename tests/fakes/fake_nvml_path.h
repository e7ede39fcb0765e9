// Where the build puts the stand-in libnvidia-ml.so.1 (tests/fakes/fake_nvml),
// for tests that load it through the NVML reader. One definition: the
// sanitizer and aarch64 builds compile test files in batches.
#pragma once

namespace gpuctl::testing {

inline constexpr const char* kFakeNvmlLibrary = GPUCTL_BINARY_DIR "/tests/fake_nvml/libnvidia-ml.so.1";

}  // namespace gpuctl::testing
