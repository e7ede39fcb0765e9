// The clairvoyant schedule: the best the simulator's host allows a
// scheduler that knows every compile's memory trace in advance, the bar the
// live governor is measured against (build_sim_bench's "/ clairvoyant").
//
// A list schedule: compiles longest first (most ticks; ties in ninja's
// order), each started only when the exact future memory of the running
// compiles plus its own trace, started now, never passes the build's budget
// (what the host has above the guard's reserve). Nothing is ever paused.
// Every running compile advances at the same speed (the simulator shares
// the cores evenly), so their traces stay aligned as they were admitted: a
// check at admission holds for the rest of their lives.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpuctl::sim {

struct SimCompile;

// A running compile: its memory per tick of progress, and how far it is.
struct RunningTrace {
  const std::vector<uint64_t>* rss_bytes = nullptr;
  double progress = 0;
};

// Whether `candidate`, started now, keeps the memory of it and of `running`
// at or under `limit` at every tick until they all end. A compile part-way
// through a tick (the cores were shared) may be one tick further on when
// the candidate's tick comes round: it counts the larger of the two.
bool FitsExactly(const std::vector<RunningTrace>& running, const std::vector<uint64_t>& candidate, uint64_t limit);

// The list's order: indices of `compiles`, longest first, ties in their order.
std::vector<size_t> LongestFirst(const std::vector<SimCompile>& compiles);

}  // namespace gpuctl::sim
