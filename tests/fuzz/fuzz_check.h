// What every fuzz target shares: the input as text, and an invariant check
// that stops the fuzzer (libFuzzer then saves the input as crash-*).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

// Violated invariants abort (libFuzzer reports "deadly signal" and keeps the
// input); printed first so the log says which one.
#define FUZZ_CHECK(condition)                                                           \
  do {                                                                                  \
    if (!(condition)) {                                                                 \
      std::fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #condition); \
      std::abort();                                                                     \
    }                                                                                   \
  } while (false)

namespace gpuctl::fuzz {

inline std::string_view AsText(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace gpuctl::fuzz
