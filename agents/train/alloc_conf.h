// Checks a PYTORCH_CUDA_ALLOC_CONF value before a job starts, so that a typo is
// refused by gpuctl with a hint instead of killing the job at CUDA init
// (see fixtures/gpu-host/oom-badconf.log for what PyTorch does with it).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace gpuctl::train {

// Follows the grammar of PyTorch's ConfigTokenizer (c10/core/AllocatorConfig.h,
// c10/cuda/CUDAAllocatorConfig.cpp, releases 2.9 to 2.11): comma-separated
// `key:value` pairs, a value may be a bracketed list `[a:b,c:d]`, whitespace
// anywhere is dropped, a trailing comma is allowed, a repeated key is allowed
// (the last one wins).
//
// Known keys and the values they take:
//   max_split_size_mb, max_non_split_rounding_mb   whole number >= 20
//   garbage_collection_threshold                   number strictly between 0 and 1
//   roundup_power2_divisions                       power of two, or [size:divisions,...]
//                                                  with size a power of two or '>' and
//                                                  divisions a power of two or 0
//   expandable_segments, release_lock_on_cudamalloc, pinned_use_cuda_host_register,
//   pinned_use_background_threads, graph_capture_record_stream_reuse
//                                                  True or False (case-sensitive)
//   backend                                        native or cudaMallocAsync
//   pinned_num_register_threads                    power of two, at most 128
//   pinned_reserve_segment_size_mb                 whole number > 0
//   per_process_memory_fraction                    number from 0 to 1
// (and the ROCm spellings release_lock_on_hipmalloc, pinned_use_hip_host_register).
//
// Stricter than PyTorch where PyTorch silently misreads: numbers must be plain
// digits (std::stoull reads "-1" as a huge number and "20abc" as 20), and the
// ':' after a key is required (PyTorch ignores what stands there).
//
// Returns InvalidArgument saying what was wrong and an example of a good value.
// An empty (or all-blank) conf is an error: leave the option out instead.
Status ValidateAllocConf(std::string_view conf);

// The split ConfigTokenizer makes: ',', ':', '[' and ']' are tokens of their
// own, whitespace is dropped wherever it stands, anything else accumulates.
// The one tokenizer of a conf: the check above and the OOM remediation's edit
// of a conf (oom_remediation.cc) both read it through here.
std::vector<std::string> TokenizeAllocConf(std::string_view conf);

// A top-level item of a conf: "key:value", the value's tokens joined (so a
// bracketed list stays whole, "[256:1,>:4]"), or a bare key (no ':').
struct AllocConfItem {
  std::string key;
  std::optional<std::string> value;
  std::string Text() const;  // "key:value", or "key"
  bool operator==(const AllocConfItem&) const = default;
};

// The conf's items in order, blanks dropped ("a : 1 , ,b:[1:2,>:4]," ->
// {a, 1}, {b, [1:2,>:4]}). Repeated keys stay: the last one wins in PyTorch.
std::vector<AllocConfItem> AllocConfItems(std::string_view conf);

}  // namespace gpuctl::train
