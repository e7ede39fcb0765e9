#include "tests/sim/clairvoyant.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "tests/sim/build_sim.h"

namespace gpuctl::sim {
namespace {

// What `trace`, at `progress`, holds `ahead` ticks from now; 0 once ended.
uint64_t ClairvoyantRssAhead(const RunningTrace& trace, size_t ahead) {
  const std::vector<uint64_t>& rss = *trace.rss_bytes;
  const size_t at = static_cast<size_t>(trace.progress) + ahead;
  uint64_t bytes = at < rss.size() ? rss[at] : 0;
  // Admitted mid-tick: its tick and the candidate's may round apart by one.
  if (trace.progress != std::floor(trace.progress) && at + 1 < rss.size()) bytes = std::max(bytes, rss[at + 1]);
  return bytes;
}

}  // namespace

bool FitsExactly(const std::vector<RunningTrace>& running, const std::vector<uint64_t>& candidate, uint64_t limit) {
  size_t horizon = candidate.size();
  for (const RunningTrace& trace : running) {
    const size_t done = static_cast<size_t>(trace.progress);
    if (done < trace.rss_bytes->size()) horizon = std::max(horizon, trace.rss_bytes->size() - done);
  }
  for (size_t ahead = 0; ahead < horizon; ++ahead) {
    uint64_t total = ahead < candidate.size() ? candidate[ahead] : 0;
    for (const RunningTrace& trace : running) total += ClairvoyantRssAhead(trace, ahead);
    if (total > limit) return false;
  }
  return true;
}

std::vector<size_t> LongestFirst(const std::vector<SimCompile>& compiles) {
  std::vector<size_t> order(compiles.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return compiles[a].rss_bytes.size() > compiles[b].rss_bytes.size();
  });
  return order;
}

}  // namespace gpuctl::sim
