// Tells which of a fixed set of literals occur in a text, in one pass over it
// (an Aho-Corasick automaton). The metric patterns' hints are tested against
// every log line; one pass costs about a nanosecond a byte however many hints.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpuctl::train {

class LiteralScanner {
 public:
  static constexpr size_t kMaxLiterals = 64;

  // At most kMaxLiterals literals (the caller checks); empty ones never match.
  explicit LiteralScanner(const std::vector<std::string>& literals);

  // Bit i is set when literals[i] occurs in `text`.
  uint64_t Scan(std::string_view text) const;

 private:
  std::vector<std::array<uint32_t, 256>> next_;  // state x byte -> state
  std::vector<uint64_t> found_;                  // literals that end at a state
};

}  // namespace gpuctl::train
