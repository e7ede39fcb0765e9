// Where a line's words start, sixty-four bytes at a time. A word is a run of
// [A-Za-z0-9_]; a word starts where such a byte follows any other byte, or
// the line's start. The event-word and metrics-key scans look only there,
// and finding the starts was a third of log ingest (which reads every byte
// of every job's log): eight bytes at a time it still took 40 instructions
// per eight bytes; byte_masks.h takes about that for sixty-four.
#pragma once

#include <bit>
#include <cstdint>
#include <string_view>

#include "agents/train/byte_masks.h"

namespace gpuctl::train {

class WordStarts {
 public:
  explicit WordStarts(std::string_view text) : text_(text) {}

  // The next word start, in increasing order; npos after the last.
  size_t Next() {
    while (starts_ == 0) {
      if (next_block_ >= text_.size()) return std::string_view::npos;
      Load();
    }
    const auto bit = static_cast<size_t>(std::countr_zero(starts_));
    starts_ &= starts_ - 1;
    return block_ + bit;
  }

 private:
  void Load() {
    const uint64_t word = BitsAt<WordBits>(text_, next_block_);
    starts_ = word & ~((word << 1) | (last_was_word_ ? 1u : 0u));
    last_was_word_ = (word >> 63) != 0;
    block_ = next_block_;
    next_block_ += kMaskBlock;
  }

  std::string_view text_;
  size_t block_ = 0;       // where the loaded bytes start
  size_t next_block_ = 0;  // where the next block starts
  uint64_t starts_ = 0;    // the loaded bytes' word starts not yet returned
  bool last_was_word_ = false;  // the byte before next_block_
};

}  // namespace gpuctl::train
