// A ProcessControl over a made-up process table: which pids and groups are
// alive, their start times and groups are set by the test, and every signal
// sent is recorded. A group can be told how it reacts to signals (die on
// SIGTERM, or only on SIGKILL) so that stop logic is tested without real
// processes. Thread-safe.
#pragma once

#include <signal.h>

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "agents/sys/process_control.h"

namespace gpuctl::testing {

class FakeProcessControl final : public sys::ProcessControl {
 public:
  struct SentSignal {
    int64_t target = 0;  // a pid, or a pgid when `group`
    bool group = false;
    int sig = 0;
    bool operator==(const SentSignal&) const = default;
  };

  // How a group reacts to SignalGroup. kIgnores: nothing dies (a process in
  // uninterruptible sleep); kDiesOnSigterm: SIGTERM, SIGINT, SIGHUP or
  // SIGKILL end it; kDiesOnSigkill: only SIGKILL does (it traps SIGTERM).
  enum class Reaction { kIgnores, kDiesOnSigterm, kDiesOnSigkill };

  // Called after a signal was recorded (and a group it ended marked dead),
  // outside the lock: e.g. to write the exit status a real wrapper would.
  using SignalHook = std::function<void(const SentSignal&)>;

  // Called at the start of each Alive(pid), outside the lock: lets a test
  // end a job just as it is looked at (the race between a read and a check).
  using AliveHook = std::function<void(int64_t pid)>;

  // --- sys::ProcessControl ---
  bool Alive(int64_t pid) override {
    AliveHook hook;
    {
      std::lock_guard lock(mutex_);
      hook = on_alive_;
    }
    if (hook) hook(pid);
    std::lock_guard lock(mutex_);
    return alive_.contains(pid);
  }
  bool GroupAlive(int64_t pgid) override {
    std::lock_guard lock(mutex_);
    return groups_alive_.contains(pgid);
  }
  std::optional<uint64_t> StartTime(int64_t pid) override {
    std::lock_guard lock(mutex_);
    if (!alive_.contains(pid)) return std::nullopt;
    auto it = start_times_.find(pid);
    if (it == start_times_.end()) return std::nullopt;
    return it->second;
  }
  std::optional<int64_t> ProcessGroup(int64_t pid) override {
    std::lock_guard lock(mutex_);
    if (!alive_.contains(pid)) return std::nullopt;
    auto it = groups_.find(pid);
    if (it == groups_.end()) return std::nullopt;
    return it->second;
  }
  std::optional<std::string> MemoryCgroup(int64_t pid) override {
    std::lock_guard lock(mutex_);
    if (!alive_.contains(pid)) return std::nullopt;
    auto it = cgroups_.find(pid);
    if (it == cgroups_.end()) return std::nullopt;
    return it->second;
  }
  std::optional<int64_t> HostPidInContainer(const std::string& container_root, int64_t inner_pid) override {
    std::lock_guard lock(mutex_);
    auto it = container_pids_.find({container_root, inner_pid});
    if (it == container_pids_.end() || !alive_.contains(it->second)) return std::nullopt;
    return it->second;
  }
  Status Signal(int64_t pid, int sig) override { return Record({pid, false, sig}); }
  Status SignalGroup(int64_t pgid, int sig) override { return Record({pgid, true, sig}); }
  Status ReleaseMemory(int64_t pid) override {
    std::lock_guard lock(mutex_);
    released_.push_back(pid);
    return Status::Ok();
  }

  // --- set by tests ---
  // A live process `pid` in live group `pgid`, started at `start_time` ticks.
  void AddProcess(int64_t pid, int64_t pgid, uint64_t start_time) {
    std::lock_guard lock(mutex_);
    alive_.insert(pid);
    groups_[pid] = pgid;
    start_times_[pid] = start_time;
    groups_alive_.insert(pgid);
  }
  // Process `inner_pid` of the container rooted at `container_root` is
  // `host_pid` here.
  void MapContainerPid(const std::string& container_root, int64_t inner_pid, int64_t host_pid) {
    std::lock_guard lock(mutex_);
    container_pids_[{container_root, inner_pid}] = host_pid;
  }
  void SetAlive(int64_t pid, bool alive) {
    std::lock_guard lock(mutex_);
    if (alive) {
      alive_.insert(pid);
    } else {
      alive_.erase(pid);
    }
  }
  void SetGroupAlive(int64_t pgid, bool alive) {
    std::lock_guard lock(mutex_);
    if (alive) {
      groups_alive_.insert(pgid);
    } else {
      groups_alive_.erase(pgid);
    }
  }
  void SetStartTime(int64_t pid, uint64_t ticks) {
    std::lock_guard lock(mutex_);
    start_times_[pid] = ticks;
  }
  void SetProcessGroup(int64_t pid, int64_t pgid) {
    std::lock_guard lock(mutex_);
    groups_[pid] = pgid;
  }
  void SetMemoryCgroup(int64_t pid, std::string cgroup) {
    std::lock_guard lock(mutex_);
    cgroups_[pid] = std::move(cgroup);
  }
  // Ends the group and every process in it, as if they all exited.
  void KillGroup(int64_t pgid) {
    std::lock_guard lock(mutex_);
    KillGroupLocked(pgid);
  }
  void SetReaction(int64_t pgid, Reaction reaction) {
    std::lock_guard lock(mutex_);
    reactions_[pgid] = reaction;
  }
  void SetOnSignal(SignalHook hook) {
    std::lock_guard lock(mutex_);
    on_signal_ = std::move(hook);
  }
  void SetOnAlive(AliveHook hook) {
    std::lock_guard lock(mutex_);
    on_alive_ = std::move(hook);
  }
  void SetSignalStatus(Status s) {
    std::lock_guard lock(mutex_);
    signal_status_ = std::move(s);
  }

  // --- read by tests ---
  std::vector<SentSignal> signals() const {
    std::lock_guard lock(mutex_);
    return signals_;
  }
  // The pids whose memory was released (ReleaseMemory), in order.
  std::vector<int64_t> released() const {
    std::lock_guard lock(mutex_);
    return released_;
  }

 private:
  Status Record(SentSignal sent) {
    SignalHook hook;
    Status result;
    {
      std::lock_guard lock(mutex_);
      signals_.push_back(sent);
      result = signal_status_;
      if (sent.group) {
        auto it = reactions_.find(sent.target);
        Reaction reaction = it == reactions_.end() ? Reaction::kDiesOnSigterm : it->second;
        bool dies = reaction == Reaction::kDiesOnSigterm
                        ? (sent.sig == SIGTERM || sent.sig == SIGINT || sent.sig == SIGHUP || sent.sig == SIGKILL)
                        : reaction == Reaction::kDiesOnSigkill && sent.sig == SIGKILL;
        if (dies) KillGroupLocked(sent.target);
      } else if (sent.sig == SIGKILL || sent.sig == SIGTERM) {
        alive_.erase(sent.target);
      }
      hook = on_signal_;
    }
    if (hook) hook(sent);
    return result;
  }

  void KillGroupLocked(int64_t pgid) {
    groups_alive_.erase(pgid);
    for (const auto& [pid, group] : groups_) {
      if (group == pgid) alive_.erase(pid);
    }
  }

  mutable std::mutex mutex_;
  std::set<int64_t> alive_;
  std::set<int64_t> groups_alive_;
  std::map<int64_t, uint64_t> start_times_;
  std::map<int64_t, int64_t> groups_;
  std::map<int64_t, std::string> cgroups_;
  std::map<int64_t, Reaction> reactions_;
  std::map<std::pair<std::string, int64_t>, int64_t> container_pids_;
  std::vector<SentSignal> signals_;
  std::vector<int64_t> released_;
  SignalHook on_signal_;
  AliveHook on_alive_;
  Status signal_status_;
};

}  // namespace gpuctl::testing
