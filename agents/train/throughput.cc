#include "agents/train/throughput.h"

namespace gpuctl::train {
namespace {

struct Spelling {
  std::string_view printed;
  std::string_view unit;
};
constexpr Spelling kSpellings[] = {
    {"tok/s", "tok/s"},         {"tokens/s", "tok/s"},     {"token/s", "tok/s"},
    {"tok/sec", "tok/s"},       {"tokens/sec", "tok/s"},   {"samples/s", "samples/s"},
    {"sample/s", "samples/s"},  {"samples/sec", "samples/s"}, {"it/s", "it/s"},
    {"it/sec", "it/s"},         {"s/it", "s/it"},          {"img/s", "img/s"},
    {"images/s", "img/s"},
};

std::string_view KnownUnit(std::string_view printed) {
  for (const Spelling& s : kSpellings) {
    if (s.printed == printed) return s.unit;
  }
  return {};
}

// Items per second, the quantity "faster" is about.
double RatePerSecond(const Throughput& t) {
  if (t.unit != "s/it") return t.value;
  return t.value > 0 ? 1.0 / t.value : 0.0;
}

}  // namespace

Throughput NormalizeThroughput(double number, std::string_view unit_as_printed) {
  std::string compact;
  for (char c : unit_as_printed) {
    if (c != ' ' && c != '\t') compact += c;
  }
  if (std::string_view unit = KnownUnit(compact); !unit.empty()) return {number, std::string(unit)};
  if (compact.size() > 1) {
    double scale = 0;
    switch (compact[0]) {
      case 'k': case 'K': scale = 1e3; break;
      case 'M': scale = 1e6; break;
      case 'G': scale = 1e9; break;
      default: break;
    }
    std::string_view unit = KnownUnit(std::string_view(compact).substr(1));
    if (scale > 0 && !unit.empty() && unit != "s/it") return {number * scale, std::string(unit)};
  }
  return {number, compact};
}

std::string_view ThroughputFamily(const Throughput& t) {
  if (t.unit == "it/s" || t.unit == "s/it") return "it";
  return t.unit;
}

bool IsFaster(const Throughput& a, const Throughput& b) {
  if (ThroughputFamily(a) != ThroughputFamily(b)) return false;
  return RatePerSecond(a) > RatePerSecond(b);
}

}  // namespace gpuctl::train
