// What each compile peaked at, and how long it ran, by source file, kept on
// the host between builds (state_dir/build-peaks.json), so a rebuild of the
// same tree is predicted from what it did last time, not from a model, and
// starts its longest compiles first, and is forecast over time from its
// memory curve. Bounded: the oldest entries go first past kMaxPeakHistory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "agents/build/build_governor_policy.h"
#include "common/status.h"

namespace gpuctl::build {

inline constexpr size_t kMaxPeakHistory = 20000;
// Curves (memory over time, in MiB per step) are kept for the newest
// sources only, and up to so many steps: the file stays a few MiB.
inline constexpr size_t kMaxCurveHistory = 4000;
inline constexpr size_t kMaxCurveSteps = 600;

class PeakHistory {
 public:
  // Reads the file; a missing one is an empty history, and so is one that
  // does not parse (it is only a hint: logged by the caller, then rewritten).
  static Result<PeakHistory> Load(const std::string& path);
  // From and to the file's text. Errors: kInvalidArgument for bad JSON.
  static Result<PeakHistory> Parse(std::string_view text);
  std::string Serialize() const;
  Status Save(const std::string& path) const;

  std::map<std::string, uint64_t> Peaks() const;
  // Running seconds of the sources whose time is known (files written
  // before times were kept have none).
  std::map<std::string, double> Seconds() const;
  // Memory curves of the sources that have one.
  std::map<std::string, CompileCurve> Curves() const;
  // Records the compiles that ended (those without a source are skipped),
  // keeping each source's highest peak, longest running time, and the
  // curve of its longest run (a compile killed part-way ends early).
  void Record(const std::vector<FinishedCompile>& finished);
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    uint64_t peak_bytes = 0;
    uint64_t seq = 0;  // larger: recorded later
    double seconds = 0;
    CompileCurve curve;  // steps empty: none
  };
  std::map<std::string, Entry> entries_;
  uint64_t next_seq_ = 0;
};

}  // namespace gpuctl::build
