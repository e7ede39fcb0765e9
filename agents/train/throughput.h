// A training speed as logs print it ("13.8 Ktok/s", "1.04it/s", "2.5s/it"),
// brought to one unit per kind so that readings can be compared.
#pragma once

#include <string>
#include <string_view>

namespace gpuctl::train {

struct Throughput {
  // With the K/M/G prefix applied: "13.8 Ktok/s" -> 13800. Negative when the
  // log printed it so ("-13.8 Ktok/s" -> -13800): no rate is, but the reading
  // says what the job said rather than a speed it never had.
  double value = 0;
  std::string unit;  // "tok/s", "samples/s", "it/s", "s/it", "img/s", or as printed
  bool operator==(const Throughput&) const = default;
};

// `unit_as_printed` may carry a k/K (1e3), M (1e6) or G (1e9) prefix and
// blanks ("K tok/s"). Spellings are unified: tokens/s, token/s, tok/sec ->
// tok/s; sample/s, samples/sec -> samples/s; it/sec -> it/s; images/s -> img/s.
Throughput NormalizeThroughput(double number, std::string_view unit_as_printed);

// Readings of one family can be compared: it/s and s/it are one family (tqdm
// switches between them as the rate crosses 1 it/s), every other unit is its own.
std::string_view ThroughputFamily(const Throughput& t);

// True when `a` is a higher rate than `b` (for s/it: fewer seconds); false
// when they are of different families.
bool IsFaster(const Throughput& a, const Throughput& b);

}  // namespace gpuctl::train
