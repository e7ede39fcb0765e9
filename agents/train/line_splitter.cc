#include "agents/train/line_splitter.h"

#include <algorithm>
#include <bit>

#include "agents/train/byte_masks.h"

namespace gpuctl::train {
namespace {

// The '\n's and '\r's of a chunk, found 64 bytes at a time: two memchr
// calls a line (one for each byte) were a third of the 7% of log ingest that
// went to memchr, and this runs over every byte of every job's log.
class LineEnds {
 public:
  explicit LineEnds(std::string_view text) : text_(text) {}

  // The first line end at or after `from`; npos if none.
  size_t From(size_t from) {
    while (from < text_.size()) {
      const size_t block = from - from % kMaskBlock;
      if (block != block_) Load(block);
      const uint64_t ends = ends_ & (~uint64_t{0} << (from - block));
      if (ends != 0) return block + static_cast<size_t>(std::countr_zero(ends));
      from = block + kMaskBlock;
    }
    return std::string_view::npos;
  }

 private:
  void Load(size_t block) {
    block_ = block;
    ends_ = BitsAt<LineEndBits>(text_, block);
  }

  std::string_view text_;
  size_t block_ = std::string_view::npos;  // the block ends_ holds
  uint64_t ends_ = 0;
};

}  // namespace

LineSplitter::LineSplitter(size_t max_line_bytes) : max_line_bytes_(std::max<size_t>(max_line_bytes, 1)) {}

void LineSplitter::AppendCapped(std::string_view piece) {
  size_t room = max_line_bytes_ - std::min(max_line_bytes_, partial_.size());
  partial_.append(piece.substr(0, room));
}

void LineSplitter::Feed(std::string_view chunk, uint64_t chunk_offset, const LineSink& sink) {
  if (chunk.empty()) return;
  if (fed_ && chunk_offset != next_offset_) {
    uint64_t chunk_end = chunk_offset + chunk.size();
    if (chunk_offset < next_offset_ && chunk_end > next_offset_) {
      chunk.remove_prefix(static_cast<size_t>(next_offset_ - chunk_offset));
      chunk_offset = next_offset_;
    } else {
      partial_.clear();
      in_line_ = false;
    }
  }
  fed_ = true;
  next_offset_ = chunk_offset + chunk.size();

  LineEnds ends(chunk);
  size_t pos = 0;
  while (pos < chunk.size()) {
    const size_t end = std::min(ends.From(pos), chunk.size());
    std::string_view piece = chunk.substr(pos, end - pos);
    if (end == chunk.size()) {  // no terminator yet: keep the head for later
      if (!in_line_) {
        in_line_ = true;
        line_offset_ = chunk_offset + pos;
      }
      AppendCapped(piece);
      break;
    }
    if (in_line_) {
      AppendCapped(piece);
      sink(partial_, line_offset_);
      partial_.clear();
      in_line_ = false;
    } else {
      sink(piece.substr(0, max_line_bytes_), chunk_offset + pos);
    }
    pos = end + 1;
  }
}

void LineSplitter::Finish(const LineSink& sink) {
  if (!in_line_) return;
  sink(partial_, line_offset_);
  partial_.clear();
  in_line_ = false;
}

}  // namespace gpuctl::train
