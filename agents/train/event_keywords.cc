#include "agents/train/event_keywords.h"

#include <array>
#include <cstdint>

namespace gpuctl::train {
namespace {

// Lines this short are always looked at: whole-line signal reports.
constexpr size_t kShortLine = 40;

// Key words, matched by their first four bytes at a word start.
constexpr std::string_view kKeywords[] = {
    "CUDA",               // CUDA out of memory, CUDA error: out of memory
    "NCCL", "nccl",       // NCCL error/WARN/communicator, ncclInternalError...
    "Watchdog",           // Watchdog caught collective operation timeout
    "Signal", "signal",   // Signal 9 (SIGKILL) received, got/killed by signal, Signals.SIGTERM
    "cuda",               // cuda runtime error (2) : out of memory
    "exitcode", "exit",   // torchrun's exitcode: -9, exit status -9, exit code -9
    "return", "returncode",  // return code = -9, returncode=-9
    "Killed", "Terminated", "Aborted", "Segmentation", "Bus ", "Illegal", "Floating",
                          // a shell's report glued to a progress bar
    "Fatal",              // Fatal Python error: Segmentation fault
    "line",               // bash: run.sh: line 3: 1234 Killed
    "ConfigTokenizer",    // allocator config refusals from here on
    "CachingAllocator", "Allocator", "allocator",
    "Unknown", "Unrecognized",
    "roundups",
    "single",             // Expected a single True/False argument
    "garbage_collect_threshold",
    "per_process_memory_fraction",
    "register",           // Number of register threads
    "Pinned",             // Pinned reserve segment size
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
  for (std::string_view word : kKeywords) {
    uint32_t h = Hash(Prefix(word));
    bits[h / 64] |= uint64_t{1} << (h % 64);
  }
  return bits;
}

constexpr Bitmap kBitmap = MakeBitmap();

constexpr bool IsWordByteSlow(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

constexpr std::array<bool, 256> MakeWordBytes() {
  std::array<bool, 256> table{};
  for (int c = 0; c < 256; ++c) table[static_cast<size_t>(c)] = IsWordByteSlow(static_cast<char>(c));
  return table;
}

constexpr std::array<bool, 256> kWordBytes = MakeWordBytes();

bool IsWordByte(char c) { return kWordBytes[static_cast<unsigned char>(c)]; }

}  // namespace

bool MayHoldEvent(std::string_view body) {
  if (body.size() <= kShortLine) return true;
  const size_t last = body.size() - 4;
  bool after_word_byte = false;
  for (size_t i = 0; i <= last; ++i) {
    const char c = body[i];
    if (!after_word_byte && IsWordByte(c)) {
      uint32_t h = Hash(Prefix(body.substr(i, 4)));
      if (kBitmap[h / 64] & (uint64_t{1} << (h % 64))) return true;
    }
    after_word_byte = IsWordByte(c);
  }
  return false;
}

}  // namespace gpuctl::train
