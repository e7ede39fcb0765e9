#include "agents/train/event_keywords.h"

#include <array>
#include <cstdint>

#include "agents/train/word_starts.h"

namespace gpuctl::train {
namespace {

// The one report with no key word: the shell's "<signal description> (core
// dumped)", e.g. "Quit (core dumped)"; the other whole-line reports ("Killed",
// "exit=137") start with one.
constexpr std::string_view kCoreDumped = "(core dumped)";

// Key words, matched by their first four bytes at a word start, with the
// parser whose phrases hold them.
struct KeyWord {
  std::string_view word;
  unsigned parser;
};
constexpr KeyWord kKeywords[] = {
    {"CUDA", kCudaOomWords},  // CUDA out of memory, CUDA error: out of memory
    {"cuda", kCudaOomWords},  // cuda runtime error (2) : out of memory
    {"NCCL", kNcclWords},     // NCCL error/WARN/communicator
    {"nccl", kNcclWords},     // ncclInternalError...
    {"Watchdog", kNcclWords},  // Watchdog caught collective operation timeout
    {"Signal", kSignalWords},  // Signal 9 (SIGKILL) received, Signals.SIGTERM
    {"signal", kSignalWords},  // got/killed by signal
    {"exitcode", kSignalWords}, {"exit", kSignalWords},  // torchrun's exitcode: -9, exit status/code -9
    {"return", kSignalWords}, {"returncode", kSignalWords},  // return code = -9, returncode=-9
    // A shell's report glued to a progress bar.
    {"Killed", kSignalWords}, {"Terminated", kSignalWords}, {"Aborted", kSignalWords},
    {"Segmentation", kSignalWords}, {"Bus ", kSignalWords}, {"Illegal", kSignalWords},
    {"Floating", kSignalWords},
    {"Fatal", kSignalWords},  // Fatal Python error: Segmentation fault
    {"line", kSignalWords},   // bash: run.sh: line 3: 1234 Killed
    // Allocator config refusals.
    {"ConfigTokenizer", kAllocConfWords}, {"CachingAllocator", kAllocConfWords},
    {"Allocator", kAllocConfWords}, {"allocator", kAllocConfWords},
    {"Unknown", kAllocConfWords}, {"Unrecognized", kAllocConfWords},
    {"roundups", kAllocConfWords},
    {"single", kAllocConfWords},  // Expected a single True/False argument
    {"garbage_collect_threshold", kAllocConfWords},
    {"per_process_memory_fraction", kAllocConfWords},
    {"register", kAllocConfWords},  // Number of register threads
    {"Pinned", kAllocConfWords},    // Pinned reserve segment size
};

constexpr uint32_t Prefix(std::string_view word) {
  return static_cast<uint32_t>(static_cast<unsigned char>(word[0])) |
         static_cast<uint32_t>(static_cast<unsigned char>(word[1])) << 8 |
         static_cast<uint32_t>(static_cast<unsigned char>(word[2])) << 16 |
         static_cast<uint32_t>(static_cast<unsigned char>(word[3])) << 24;
}

constexpr uint32_t Hash(uint32_t prefix) { return (prefix * 2654435761u) >> 16; }  // 16 bits

using Bitmap = std::array<uint64_t, 65536 / 64>;

constexpr Bitmap MakeBitmap() {
  Bitmap bits{};
  for (const KeyWord& k : kKeywords) {
    uint32_t h = Hash(Prefix(k.word));
    bits[h / 64] |= uint64_t{1} << (h % 64);
  }
  return bits;
}

constexpr Bitmap kBitmap = MakeBitmap();

constexpr size_t kKeywordCount = sizeof kKeywords / sizeof kKeywords[0];
constexpr std::array<uint32_t, kKeywordCount> MakeKeywordPrefixes() {
  std::array<uint32_t, kKeywordCount> prefixes{};
  for (size_t i = 0; i < kKeywordCount; ++i) prefixes[i] = Prefix(kKeywords[i].word);
  return prefixes;
}
constexpr std::array<uint32_t, kKeywordCount> kKeywordPrefixes = MakeKeywordPrefixes();

}  // namespace

unsigned EventWordsIn(std::string_view body) {
  unsigned words = 0;
  std::string_view trimmed = body;
  while (!trimmed.empty() && (trimmed.back() == ' ' || trimmed.back() == '\t')) trimmed.remove_suffix(1);
  if (trimmed.ends_with(kCoreDumped)) words |= kSignalWords;
  if (body.size() < 4) return words;
  const size_t last = body.size() - 4;  // the last word start with four bytes
  WordStarts starts(body);
  for (size_t i = starts.Next(); i <= last; i = starts.Next()) {  // npos ends it too
    const uint32_t prefix = Prefix(body.substr(i, 4));
    const uint32_t h = Hash(prefix);
    // The bitmap turns almost every word away; a hit names its parsers.
    if (kBitmap[h / 64] & (uint64_t{1} << (h % 64))) {
      for (size_t k = 0; k < kKeywordCount; ++k) {
        if (kKeywordPrefixes[k] == prefix) words |= kKeywords[k].parser;
      }
      if (words == kAllEventWords) return words;
    }
  }
  return words;
}

bool MayHoldEvent(std::string_view body) { return EventWordsIn(body) != 0; }

}  // namespace gpuctl::train
