// A build's processes grouped into compile trees: each compiler process
// whose ancestors (within the build) are not compilers is a root, and its
// tree is every process below it (nvcc -> sh -> cicc, ptxas; g++ -> cc1plus,
// collect2 -> ld). What the governor weighs, pauses and resumes is a tree.
// Pure: the processes' stat lines in, trees out.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "agents/sys/proc_stat.h"

namespace gpuctl::build {

struct CompileTree {
  int64_t root_pid = 0;
  uint64_t root_start_ticks = 0;  // with the pid, names the tree for good
  std::string program;            // the root's comm: "nvcc", "g++", "ptxas"
  std::vector<int64_t> pids;      // the root first, then every descendant
  std::vector<int64_t> running;   // those not stopped (state T): what a pause must still stop
  uint64_t rss_bytes = 0;         // of the whole tree
  bool stopped = false;           // every live member is stopped (state T)
  std::vector<int64_t> cicc_pids; // nvcc's device compiler: its peak (one per arch)
  uint32_t busy = 0;              // members running or runnable (state R): the cores it wants
};

struct BuildProcesses {
  std::vector<CompileTree> trees;  // in root pid order
  uint64_t other_rss_bytes = 0;    // processes in no tree: ninja, make, python, sh
};

// Whether a child shares its parent's address space (kcmp), nullopt when
// that cannot be known (sys::ProcessControl::SameAddressSpace).
using SameAddressSpaceFn = std::function<std::optional<bool>(int64_t child, int64_t parent)>;

// `processes`: every process of the build (its cgroup); exited ones
// (zombies) are left out. A process whose parent is outside the list is a
// top; a cycle in bad input cannot loop (each walk is bounded). A child
// that shares its parent's address space is counted once: asked of
// `same_address_space` when its layout is its parent's, else judged by its
// layout, size and rss all being its parent's.
BuildProcesses GroupCompileTrees(const std::vector<sys::ProcStat>& processes, uint64_t page_bytes,
                                 const SameAddressSpaceFn& same_address_space = {});

}  // namespace gpuctl::build
