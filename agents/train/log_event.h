// One thing recognised in a training job's log: an out-of-memory error, a
// refused allocator config, an NCCL failure, a Python traceback or a death by
// signal. Flat optional fields named as they appear in JSON, so that turning an
// event into JSON is one line per field: write a field when it has a value.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/event_kinds.h"

namespace gpuctl::train {

// The values of LogEvent::kind (spelled in common/event_kinds.h).
using event_kind::kAllocConfInvalid;
using event_kind::kCudaOom;
using event_kind::kNcclError;
using event_kind::kSignal;
using event_kind::kTraceback;

// LogEvent::message is cut to this many bytes (at a UTF-8 boundary): enough
// for PyTorch's whole OOM message, small enough to store every event.
inline constexpr size_t kMaxLogEventMessageBytes = 4096;

// "Process 1234 has 1.00 GiB memory in use." in a CUDA OOM message: another
// process holding memory on the same GPU.
struct GpuProcessMemory {
  int64_t pid = 0;
  uint64_t bytes = 0;
  bool operator==(const GpuProcessMemory&) const = default;
};

struct LogEvent {
  std::string kind;  // one of the k* names above
  // Byte offset in the log of the first byte of the line that completed the
  // event (for a traceback: its final "ExcType: message" line).
  uint64_t offset = 0;
  // That line as printed, less a torchrun "[rankN]:" prefix and trailing
  // blanks, at most kMaxLogEventMessageBytes.
  std::string message;
  // From a torchrun "[rankN]:" (or "[defaultN]:") line prefix.
  std::optional<int> rank;
  // The Python exception class when the line is "ExcType: message", e.g.
  // "torch.OutOfMemoryError", "ValueError".
  std::optional<std::string> exception_type;

  // cuda_oom. A figure the message does not state (older wording, a message
  // cut short) stays empty.
  std::optional<int> gpu;
  std::optional<uint64_t> tried_bytes;     // "Tried to allocate"
  std::optional<uint64_t> total_bytes;     // "total capacity"
  std::optional<uint64_t> free_bytes;      // "of which X is free" / "X free"
  std::optional<uint64_t> in_use_bytes;    // "this process has X memory in use" (2.1+ only)
  std::optional<uint64_t> allocated_bytes; // "X is allocated by PyTorch" / "X already allocated"
  // "X is reserved by PyTorch but unallocated"; before 2.1, computed as
  // "reserved in total by PyTorch" minus "already allocated".
  std::optional<uint64_t> reserved_unallocated_bytes;
  // "X allowed;": the cap set by torch.cuda.set_per_process_memory_fraction.
  std::optional<uint64_t> allowed_bytes;
  std::vector<GpuProcessMemory> other_processes;

  // traceback: where its "Traceback (most recent call last):" line starts.
  std::optional<uint64_t> traceback_offset;

  // nccl_error: the NCCL result code when the line names it, e.g.
  // "ncclUnhandledCudaError" (also read from NCCL's wording of it).
  std::optional<std::string> nccl_code;

  // signal
  std::optional<int> signal_number;        // Linux numbering: 9, 11, 15...
  std::optional<std::string> signal_name;  // "SIGKILL"
  std::optional<int64_t> pid;              // the process that got it, when said

  bool operator==(const LogEvent&) const = default;
};

}  // namespace gpuctl::train
