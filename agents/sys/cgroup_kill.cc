#include "agents/sys/cgroup_kill.h"

#include <csignal>
#include <set>
#include <thread>

#include "agents/sys/process_control.h"

namespace gpuctl::sys {
namespace {

std::string PidList(const std::vector<int64_t>& pids) {
  std::string out;
  for (size_t i = 0; i < pids.size() && i < 10; ++i) {
    if (!out.empty()) out += ' ';
    out += std::to_string(pids[i]);
  }
  if (pids.size() > 10) out += " ...";
  return out;
}

}  // namespace

Status KillUntilEmpty(const ListProcesses& list, ProcessControl& processes, KillMode mode,
                      std::chrono::milliseconds timeout, const std::string& what) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::set<int64_t> seen;
  while (true) {
    Result<std::vector<int64_t>> pids = list();
    if (!pids.ok()) return pids.status();
    if (pids->empty()) return Status::Ok();
    std::vector<int64_t> new_pids;
    Status first_error;
    for (int64_t pid : *pids) {
      if (seen.insert(pid).second) new_pids.push_back(pid);
      if (mode == KillMode::kWaitOnly) continue;
      Status s = processes.Signal(pid, SIGKILL);
      if (!s.ok() && first_error.ok()) first_error = s;
    }
    if (!first_error.ok()) return first_error.Wrap("killing the processes of " + what);
    // Every pid has its SIGKILL first: a release takes a while per GiB.
    for (int64_t pid : new_pids) (void)processes.ReleaseMemory(pid);
    const bool new_pid = !new_pids.empty();
    if (std::chrono::steady_clock::now() >= deadline) {
      return Unavailable(std::to_string(pids->size()) + " process(es) still in " + what + " after SIGKILL (" +
                         PidList(*pids) + "); they may be stuck in the kernel");
    }
    if (!new_pid) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace gpuctl::sys
