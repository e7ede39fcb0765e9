// Cuts a log that arrives in chunks of any size into lines, each with the byte
// offset where it starts, holding at most one partial line in memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace gpuctl::train {

class LineSplitter {
 public:
  // Long enough for any message worth reading (PyTorch's OOM message is under
  // 1 KiB); a progress bar redrawn without a line end cannot grow past it.
  static constexpr size_t kDefaultMaxLineBytes = 64 * 1024;

  // Called with each line, without its terminator, and the offset of its first
  // byte. A line longer than max_line_bytes is handed over as its first
  // max_line_bytes bytes (which may end inside a UTF-8 sequence); the bytes
  // past that are skipped but still counted, so later offsets stay exact.
  using LineSink = std::function<void(std::string_view line, uint64_t offset)>;

  explicit LineSplitter(size_t max_line_bytes = kDefaultMaxLineBytes);

  // Both '\n' and '\r' end a line: tqdm redraws its bar with '\r', and each
  // redraw is a reading. "\r\n" thus ends a line and then an empty one.
  //
  // `chunk_offset` is where the chunk starts in the log. Chunks are expected
  // back to back. A chunk that overlaps what was already fed is read from
  // where the last one ended; one that leaves a gap, or lies wholly before the
  // last one (the log was truncated or replaced), drops the partial line and
  // starts a new line at chunk_offset.
  void Feed(std::string_view chunk, uint64_t chunk_offset, const LineSink& sink);

  // Hands over a last line that has no terminator (the log ended without one).
  void Finish(const LineSink& sink);

 private:
  void AppendCapped(std::string_view piece);

  size_t max_line_bytes_;
  std::string partial_;        // the head of an unterminated line
  bool in_line_ = false;       // partial_ is (the head of) a line begun earlier
  uint64_t line_offset_ = 0;   // where that line starts
  bool fed_ = false;
  uint64_t next_offset_ = 0;   // where the next chunk should start
};

}  // namespace gpuctl::train
