// cgroup control files (v1 and v2) as the guard reads them: single numbers,
// memory.max, cgroup.procs, the flat-keyed memory.stat / memory.events and
// the reclaimable cache figured from memory.stat, cgroup paths and controller
// lists, each over the same input.
// Invariants: pids are positive; "max" is no limit; the reclaimable cache is
// the file pages less the dirty ones, whatever the figures.
#include <array>
#include <cstdint>

#include "agents/sys/cgroup_parsers.h"
#include "tests/fuzz/fuzz_check.h"

using namespace gpuctl;
using namespace gpuctl::sys;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = fuzz::AsText(data, size);
  (void)ParseCgroupNumber(text);
  if (Result<std::optional<uint64_t>> max = ParseCgroupMax(text); max.ok() && text.starts_with("max")) {
    FUZZ_CHECK(!max->has_value());
  }
  if (Result<std::vector<int64_t>> pids = ParseCgroupProcs(text); pids.ok()) {
    for (int64_t pid : *pids) FUZZ_CHECK(pid > 0);
  }
  if (Result<FlatKeyed> stat = ParseFlatKeyed(text); stat.ok()) {
    for (auto [active, inactive, dirty, writeback] :
         {std::array<const char*, 4>{"active_file", "inactive_file", "file_dirty", "file_writeback"},
          std::array<const char*, 4>{"total_active_file", "total_inactive_file", "total_dirty", "total_writeback"}}) {
      Result<uint64_t> reclaimable = ReclaimableFileFrom(*stat, active, inactive, dirty, writeback, "memory.stat");
      if (!reclaimable.ok()) continue;
      // Sums capped at 2^64-1 instead of wrapping into small figures.
      auto get = [&](const char* key) -> uint64_t { return stat->contains(key) ? stat->at(key) : 0; };
      auto sum = [](uint64_t x, uint64_t y) {
        uint64_t total = 0;
        return __builtin_add_overflow(x, y, &total) ? UINT64_MAX : total;
      };
      uint64_t file = sum(get(active), get(inactive)), busy = sum(get(dirty), get(writeback));
      FUZZ_CHECK(*reclaimable == (file > busy ? file - busy : 0));
    }
  }
  (void)StripCgroupMount(text, "/sys/fs/cgroup/memory");
  (void)StripCgroupMount(text, "/");
  (void)ControllerListHas(text, "memory");
  return 0;
}
