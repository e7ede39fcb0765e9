// The job side of the log streaming benchmark: log_stream_bench runs itself
// as a gpuctl job with --write-bulk or --write-stamped. Both modes print
// kReadyLine, wait for a "go" file (so the readers are attached before the
// clock starts), write to stdout (the job's output.log) with write(2), and
// finally write their own end time to a "done" file.
//
// Times are CLOCK_MONOTONIC nanoseconds (std::chrono::steady_clock on Linux),
// which the job and the benchmark share because they run on the same host.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuctl::bench {

inline constexpr size_t kLineBytes = 100;  // every line the writer prints after the ready line
inline constexpr std::string_view kReadyLine = "log_stream_bench: ready, waiting for the go file\n";

int64_t MonotonicNs();

struct WriterFiles {
  std::string go_file;    // created by the benchmark when the readers are attached
  std::string done_file;  // written by the job: its end time, "<ns>\n"
};

// Writes `bytes` bytes of 100-byte text lines in 1 MiB write(2) calls, as fast
// as the file takes them. Returns the process exit code.
int WriteBulk(uint64_t bytes, const WriterFiles& files);

// Writes `rate` lines per second for `duration`, each line one write(2) that
// carries its own write time (see ParseStamp), paced against the start time
// so a late line does not delay the next ones. Returns the exit code.
int WriteStamped(int rate, std::chrono::milliseconds duration, const WriterFiles& files);

// The job-side entry: args are "--write-bulk BYTES GO DONE" or
// "--write-stamped RATE MILLISECONDS GO DONE". Returns the exit code.
int RunWriter(const std::vector<std::string>& args);

// "stamp seq=00000012 t=1234567890123 ..." -> 1234567890123 (ns); nullopt for
// any other line.
std::optional<int64_t> ParseStamp(std::string_view line);

}  // namespace gpuctl::bench
