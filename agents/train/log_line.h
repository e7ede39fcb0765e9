// Small readers shared by the log parsers: the torchrun rank prefix, blanks,
// numbers at a position, UTF-8-safe cutting.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpuctl::train {

// torchrun (2.2+) starts every line of a worker with "[rank3]:" (the global
// rank); with --tee older versions wrote "[default3]:" (the local rank).
struct RankedLine {
  std::optional<int> rank;
  std::string_view body;  // the rest, trailing blanks removed
};
RankedLine SplitRankPrefix(std::string_view line);

std::string_view TrimBlanks(std::string_view text);
std::string_view TrimTrailingBlanks(std::string_view text);

// The decimal digits at text[pos...] as a number; nullopt when there are none
// or they overflow. `end` (when given) receives the index after the digits.
std::optional<uint64_t> DigitsAt(std::string_view text, size_t pos, size_t* end = nullptr);

// A Python name like "ValueError" or "torch.cuda.OutOfMemoryError".
bool IsDottedIdentifier(std::string_view text);

// "torch.OutOfMemoryError: CUDA out of..." -> "torch.OutOfMemoryError": the
// dotted identifier that starts `body` when a ':' follows it directly.
std::optional<std::string_view> LeadingExceptionType(std::string_view body);

// `text` cut to at most `max_bytes` without splitting a UTF-8 sequence.
std::string CutUtf8(std::string_view text, size_t max_bytes);

}  // namespace gpuctl::train
