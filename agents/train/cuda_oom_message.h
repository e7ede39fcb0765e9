// Reads PyTorch's CUDA out-of-memory message into figures a remediation can use
// (how much was asked, how much the GPU had, how much PyTorch held).
#pragma once

#include <optional>
#include <string_view>

#include "agents/train/log_event.h"

namespace gpuctl::train {

// `text` is one log line without its rank prefix. Returns a cuda_oom event
// (offset and rank left for the caller) when the text says "CUDA out of
// memory", or "CUDA error: out of memory" (cudaMalloc failing outside the
// caching allocator, e.g. in cuBLAS or NCCL set-up: no figures then), or
// before 1.5 "cuda runtime error (2) : out of memory".
//
// Both wordings are read by their phrases, so missing, extra or reordered
// parts do not matter and a figure cut short, or past INT64_MAX bytes (no GPU
// has that; ParseByteSize refuses it), is left empty:
//  2.1 and later: "Tried to allocate 16.00 GiB. GPU 0 has a total capacity of
//   139.80 GiB of which 11.29 GiB is free. [Process 1234 has 1.00 GiB memory in
//   use. ][Including non-PyTorch memory, this process has 128.51 GiB memory in
//   use. ][2.00 GiB allowed; ]Of the allocated memory 128.00 GiB is allocated by
//   PyTorch, [with X allocated in private pools (e.g., CUDA Graphs), ]and 0 bytes
//   is reserved by PyTorch but unallocated." (2.1.0 printed "capacty").
//  Before 2.1: "Tried to allocate 20.00 MiB (GPU 0; 15.78 GiB total capacity;
//   14.51 GiB already allocated; 5.50 MiB free; [2.00 GiB allowed; ]14.73 GiB
//   reserved in total by PyTorch)" (1.x said "X cached" for the reserve).
// exception_type is set when what precedes the phrase is exactly "ExcType:"
// (torch.OutOfMemoryError, torch.cuda.OutOfMemoryError, RuntimeError...).
std::optional<LogEvent> ParseCudaOomMessage(std::string_view text);

}  // namespace gpuctl::train
