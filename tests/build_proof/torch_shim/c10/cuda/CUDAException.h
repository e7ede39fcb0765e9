// Stand-in for PyTorch's header (see ATen/cuda/CUDAGeneratorImpl.h here).
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define C10_CUDA_CHECK(expr)                                                        \
  do {                                                                              \
    cudaError_t c10_error = (expr);                                                 \
    if (c10_error != cudaSuccess) {                                                 \
      std::fprintf(stderr, "CUDA error: %s\n", cudaGetErrorString(c10_error));      \
      std::abort();                                                                 \
    }                                                                               \
  } while (0)
#define C10_CUDA_KERNEL_LAUNCH_CHECK() C10_CUDA_CHECK(cudaGetLastError())
