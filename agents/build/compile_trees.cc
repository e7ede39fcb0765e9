#include "agents/build/compile_trees.h"

#include <algorithm>
#include <map>

#include "agents/build/compile_command.h"

namespace gpuctl::build {
namespace {

// A child made with CLONE_VM but not as a thread (LeakSanitizer's tracer at
// a sanitized program's exit, a vfork or posix_spawn child before its exec)
// is a process of its own that shares its parent's address space, and its
// stat shows the same rss as the parent's. Summed, one compile seemed to hold
// twice its memory and a build was failed as one that "cannot fit". Stat
// gives no id of an address space: the same layout (code and stack, which
// differ after an exec) picks the candidates, and kcmp(2) decides. Where it
// cannot, the same size and rss too stand for it (a forked child that has
// touched nothing yet matches as well, and counting its copy-on-write pages
// once is right for it).
bool SameLayout(const sys::ProcStat& child, const sys::ProcStat& parent) {
  return child.start_stack != 0 && child.start_stack == parent.start_stack &&
         child.start_code == parent.start_code && child.end_code == parent.end_code;
}

bool SharesItsParentsMemory(const sys::ProcStat& child, const sys::ProcStat& parent,
                            const SameAddressSpaceFn& same_address_space) {
  if (!SameLayout(child, parent)) return false;
  if (same_address_space) {
    if (std::optional<bool> same = same_address_space(child.pid, parent.pid)) return *same;
  }
  return child.vsize_bytes == parent.vsize_bytes && child.rss_pages == parent.rss_pages;
}

}  // namespace

BuildProcesses GroupCompileTrees(const std::vector<sys::ProcStat>& processes, uint64_t page_bytes,
                                 const SameAddressSpaceFn& same_address_space) {
  std::map<int64_t, const sys::ProcStat*> by_pid;
  for (const sys::ProcStat& process : processes) {
    if (!process.exited()) by_pid[process.pid] = &process;
  }
  // Each process's root: the highest compiler among itself and its
  // ancestors inside the build; 0 when there is none.
  auto root_of = [&](const sys::ProcStat& process) {
    int64_t root = 0;
    const sys::ProcStat* at = &process;
    for (size_t hops = 0; at != nullptr && hops <= by_pid.size(); ++hops) {
      if (IsCompilerName(at->comm)) root = at->pid;
      auto parent = by_pid.find(at->ppid);
      at = parent == by_pid.end() || parent->first == at->pid ? nullptr : parent->second;
    }
    return root;
  };

  BuildProcesses out;
  std::map<int64_t, CompileTree> trees;
  std::map<int64_t, bool> all_stopped;
  for (const auto& [pid, process] : by_pid) {
    uint64_t rss = process->rss_pages > 0 ? static_cast<uint64_t>(process->rss_pages) * page_bytes : 0;
    auto parent = by_pid.find(process->ppid);
    bool shared = parent != by_pid.end() && parent->first != pid &&
                  SharesItsParentsMemory(*process, *parent->second, same_address_space);
    if (shared) rss = 0;
    int64_t root = root_of(*process);
    if (root == 0) {
      out.other_rss_bytes += rss;
      continue;
    }
    CompileTree& tree = trees[root];
    tree.root_pid = root;
    tree.rss_bytes += rss;
    if (pid == root) {
      tree.program = process->comm;
      tree.root_start_ticks = process->start_time_ticks;
      tree.pids.insert(tree.pids.begin(), pid);
    } else {
      tree.pids.push_back(pid);
    }
    if (process->comm == "cicc") tree.cicc_pids.push_back(pid);
    bool stopped = process->state == 'T' || process->state == 't';
    if (!stopped) tree.running.push_back(pid);
    if (process->state == 'R') ++tree.busy;
    auto [it, fresh] = all_stopped.try_emplace(root, stopped);
    if (!fresh) it->second = it->second && stopped;
  }
  for (auto& [root, tree] : trees) {
    tree.stopped = all_stopped[root];
    out.trees.push_back(std::move(tree));
  }
  return out;
}

}  // namespace gpuctl::build
