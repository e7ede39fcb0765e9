// What a gpuctld binary needs from the host it is uploaded to: its CPU
// architecture and the newest glibc symbol version it links. Read from the
// ELF file itself (the dynamic section's version needs), so it is right for
// whatever binary is uploaded, cross-built ones included, and the bootstrap
// can refuse a node before uploading anything.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace gpuctl::client {

struct GlibcVersion {
  int major = 0;
  int minor = 0;
  std::string ToString() const { return std::to_string(major) + "." + std::to_string(minor); }
  friend auto operator<=>(const GlibcVersion&, const GlibcVersion&) = default;
};

struct BinaryRequirements {
  std::string machine;  // as `uname -m` prints it: x86_64, aarch64
  GlibcVersion glibc;   // the newest GLIBC_x.y the binary needs (0.0: none)
  std::vector<std::string> shared_libraries;  // DT_NEEDED, in order
};

// The shared libraries that are not part of glibc or libgcc (which every
// glibc host has): a portable build needs none. A non-empty answer means
// the binary was built with -DGPUCTL_PORTABLE=OFF and only runs where those
// libraries are installed.
std::vector<std::string> LibrariesBeyondGlibc(const BinaryRequirements& needs);

// Errors: kInvalidArgument when the bytes are not a 64-bit little-endian ELF
// file or its tables point outside it.
Result<BinaryRequirements> ReadBinaryRequirements(std::string_view elf);

// "2.36" (getconf GNU_LIBC_VERSION prints "glibc 2.36"; either form).
// Errors: kInvalidArgument.
Result<GlibcVersion> ParseGlibcVersion(std::string_view text);

}  // namespace gpuctl::client
