// Stand-in for PyTorch's header, so flash-attn's kernel files compile with
// nvcc alone (tests/build_proof): only what the kernels use. The heavy part
// of their compile, CUTLASS/CuTe template instantiation, is untouched.
#pragma once
#include <cstdint>

namespace at {
struct PhiloxCudaState {
  PhiloxCudaState() = default;
  PhiloxCudaState(uint64_t seed, uint64_t offset) { seed_.val = seed; offset_.val = offset; }
  union Payload {
    uint64_t val;
    int64_t* ptr;
  };
  Payload seed_{};
  Payload offset_{};
  uint32_t offset_intragraph_ = 0;
  bool captured_ = false;
};
}  // namespace at
