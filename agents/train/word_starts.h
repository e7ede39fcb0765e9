// Where a line's words start, eight bytes at a time. A word is a run of
// [A-Za-z0-9_]; a word starts where such a byte follows any other byte, or
// the line's start. The event-word and metrics-key scans look only there,
// and finding the starts a byte at a time was most of their cost (log ingest
// reads every byte of every job's log).
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace gpuctl::train {

// The high bit of each of `bytes`'s eight bytes, set where that byte is a
// word byte. Each range test subtracts within a byte that cannot borrow from
// the next (its high bit set first), so no byte sees another's result.
constexpr uint64_t WordBytesOf(uint64_t bytes) {
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  constexpr uint64_t kHigh = 0x8080808080808080ull;
  const uint64_t low7 = bytes & ~kHigh;
  auto in = [](uint64_t v, uint64_t lo, uint64_t hi) {
    return ((v | kHigh) - kOnes * lo) & ((kOnes * hi | kHigh) - v) & kHigh;
  };
  const uint64_t word = in(low7, '0', '9') | in(low7 | (kOnes * 0x20), 'a', 'z') | in(low7, '_', '_');
  return word & ~bytes;  // a byte of 0x80 or more is no word byte
}

class WordStarts {
 public:
  explicit WordStarts(std::string_view text) : text_(text) {}

  // The next word start, in increasing order; npos after the last.
  size_t Next() {
    while (starts_ == 0) {
      if (next_block_ >= text_.size()) return std::string_view::npos;
      Load();
    }
    const size_t byte = static_cast<size_t>(std::countr_zero(starts_)) / 8;
    starts_ &= starts_ - 1;
    return block_ + byte;
  }

 private:
  void Load() {
    static_assert(std::endian::native == std::endian::little || std::endian::native == std::endian::big);
    uint64_t bytes = 0;  // past the text: zero bytes, which are no word bytes
    if (text_.size() - next_block_ >= 8) {
      std::memcpy(&bytes, text_.data() + next_block_, 8);  // one load
    } else {
      std::memcpy(&bytes, text_.data() + next_block_, text_.size() - next_block_);
    }
    if constexpr (std::endian::native == std::endian::big) bytes = __builtin_bswap64(bytes);  // byte 0 lowest
    const uint64_t word = WordBytesOf(bytes);
    starts_ = word & ~((word << 8) | (last_was_word_ ? 0x80u : 0u));
    last_was_word_ = (word >> 63) != 0;
    block_ = next_block_;
    next_block_ += 8;
  }

  std::string_view text_;
  size_t block_ = 0;       // where the loaded eight bytes start
  size_t next_block_ = 0;  // where the next eight start
  uint64_t starts_ = 0;    // the loaded bytes' word starts not yet returned (their high bits)
  bool last_was_word_ = false;  // the byte before next_block_
};

}  // namespace gpuctl::train
