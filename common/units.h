// Human units in and out: durations ("500ms", "2s", "1m30s") and byte sizes
// ("16.00 GiB", "512 MiB", "0 bytes", "4G").
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace gpuctl {

inline constexpr uint64_t kKiB = uint64_t{1} << 10;
inline constexpr uint64_t kMiB = uint64_t{1} << 20;
inline constexpr uint64_t kGiB = uint64_t{1} << 30;

// Accepts a sequence of <number><unit> with units ms, s, m, h ("1m30s", "0.5s").
// A bare number is seconds. Negative values are refused.
Result<std::chrono::milliseconds> ParseDuration(std::string_view text);

// Accepts "<number>[ ]<unit>" where unit is one of B, byte(s), KB/MB/GB/TB
// (powers of 1000), KiB/MiB/GiB/TiB and K/M/G/T (powers of 1024). Case of the
// unit is respected for the SI/IEC forms, as PyTorch and nvidia-smi print them.
// A size past INT64_MAX bytes (8 EiB) is refused (kInvalidArgument): byte
// counts go on as int64 (JSON readers, the client), and a bigger one in a
// log states no usable figure.
Result<uint64_t> ParseByteSize(std::string_view text);

// "1.5 GiB", "512 MiB", "0 B": for humans, never parsed back.
std::string FormatBytes(uint64_t bytes);

// "1h02m", "3m05s", "12s".
std::string FormatDuration(std::chrono::milliseconds d);

}  // namespace gpuctl
