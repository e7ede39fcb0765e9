// A fast first look at a log line: can it hold an event at all? Logs can run
// at hundreds of MB/s (NCCL_DEBUG=INFO, progress bars), and almost no line is
// an event, so the phrase matchers only see lines this lets through.
#pragma once

#include <string_view>

namespace gpuctl::train {

// True when `body` has, at the start of a word, one of the key words that
// every phrase of the event parsers begins with or contains as a word: CUDA,
// NCCL, nccl..., Watchdog, signal, exitcode, Killed, Fatal, line,
// ConfigTokenizer, CachingAllocator, allocator... or ends in "(core dumped)",
// the shell's one report without a key word. A false positive only costs a
// full look; a phrase added to a parser needs its key word here, under its
// parser (the parser tests go through this gate).
bool MayHoldEvent(std::string_view body);

// Which parsers' key words `body` holds, as bits: a parser whose key words
// are all absent cannot match, so it is not run. 0: no event can be in it.
enum EventWords : unsigned {
  kCudaOomWords = 1u << 0,
  kAllocConfWords = 1u << 1,
  kNcclWords = 1u << 2,
  kSignalWords = 1u << 3,
  kAllEventWords = (1u << 4) - 1,
};
unsigned EventWordsIn(std::string_view body);

}  // namespace gpuctl::train
