// The last lines of a run's log, kept in its record when it ends failed
// (Job.log_tail), so a status says why without a second call. Read from the
// end within a byte bound: a log of any size costs the same.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpuctl::train {

inline constexpr size_t kLogTailLines = 5;
inline constexpr size_t kLogTailReadBytes = 8 * 1024;  // read from the end of the log
inline constexpr size_t kLogTailLineBytes = 400;       // a longer line keeps its end, after "..."

// The last `max_lines` non-empty lines of `text`, oldest first. A line's
// part before its last '\r' (a progress bar's earlier frames) is dropped;
// `starts_mid_line`: text's first line is cut, so it is not one. Lines are
// made well-formed UTF-8 (they go into protos); their control characters are
// the reader's to escape.
std::vector<std::string> LastLogLines(std::string_view text, bool starts_mid_line,
                                      size_t max_lines = kLogTailLines);

// LastLogLines of the file's last kLogTailReadBytes; none when it cannot be
// read (a log is job-writable: no link is followed, a FIFO never blocks).
std::vector<std::string> ReadLogTail(const std::string& path);

}  // namespace gpuctl::train
