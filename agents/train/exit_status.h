// The exit status file the job's wrapper writes: "$?\n", a number 0-255.
// Parsed strictly: "0abc" is not a success and a FIFO is not a file, so a
// job (or a container) writing anything else there is reported as such.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gpuctl::train {

// 0-255 written as the wrapper writes it (decimal, at most 10 digits: on a
// full disk it zero-pads the status over space set aside; one optional
// trailing newline); nothing else.
std::optional<int> ParseExitStatus(std::string_view text);

// What reading the exit status file found.
struct ExitStatusReading {
  enum class Kind { kMissing, kValue, kUnreadable };
  Kind kind = Kind::kMissing;
  int value = 0;           // kValue
  std::string why;         // kUnreadable: what was there, for the job's state reason
};

// Reads `path` as a job-writable file (sys::ReadRegularFile: no link is
// followed, a FIFO never blocks).
ExitStatusReading ReadExitStatus(const std::string& path);

}  // namespace gpuctl::train
