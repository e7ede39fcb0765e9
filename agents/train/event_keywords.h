// A fast first look at a log line: can it hold an event at all? Logs can run
// at hundreds of MB/s (NCCL_DEBUG=INFO, progress bars), and almost no line is
// an event, so the phrase matchers only see lines this lets through.
#pragma once

#include <string_view>

namespace gpuctl::train {

// True when `body` is short (a shell's "Killed", "exit=137") or has, at the
// start of a word, one of the key words that every phrase of the event parsers
// begins with or contains as a word: CUDA, NCCL, nccl..., Watchdog, signal,
// exitcode, Fatal, line, ConfigTokenizer, CachingAllocator, allocator... A
// false positive only costs a full look; a phrase added to a parser needs its
// key word here (the parser tests go through this gate).
bool MayHoldEvent(std::string_view body);

}  // namespace gpuctl::train
