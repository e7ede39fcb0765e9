#include "agents/train/line_splitter.h"

#include <algorithm>
#include <cstring>

namespace gpuctl::train {

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

  size_t pos = 0;
  while (pos < chunk.size()) {
    // The next '\n' or '\r', by two memchr passes (vectorised) rather than
    // a byte loop: this runs over every byte of every job's log.
    const char* base = chunk.data() + pos;
    size_t left = chunk.size() - pos;
    const void* nl = std::memchr(base, '\n', left);
    size_t span = nl ? static_cast<size_t>(static_cast<const char*>(nl) - base) : left;
    const void* cr = std::memchr(base, '\r', span);
    if (cr) span = static_cast<size_t>(static_cast<const char*>(cr) - base);
    size_t end = pos + span;
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
