// Run ids: every run of a job gets one, so that a record, its events, its
// cgroup and its tmux session are known to belong together, and a rerun of
// a name is never mistaken for the run before it.
#pragma once

#include <chrono>
#include <string>

namespace gpuctl::train {

// "20261201-235959-9f3a1c7e": the UTC start time (sortable, readable) and 32
// random bits, from [0-9a-zA-Z-] only (it goes into cgroup names).
std::string NewRunId(std::chrono::system_clock::time_point now);

}  // namespace gpuctl::train
