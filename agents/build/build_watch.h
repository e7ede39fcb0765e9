// The live governor in the agent: every tick, for each running build job,
// reads the processes of its cgroup, groups them into compile trees, asks
// BuildGovernor which may run, and pauses or resumes whole trees. A build
// that cannot fit is failed through a hook, with the reason, before the
// kernel's OOM killer would act.
//
// How a tree is paused: where the build's cgroup is v2, with the freezer.
// The tree moves into a pause group of its own (BUILD_CGROUP/compile-PID-
// START, no controller, so the build's limit and charge still hold it) and
// the group is frozen: a child forked at that moment stops with it, and no
// SIGCONT from the build wakes it. The tree stays in its group once thawed,
// so its later children are born there. Elsewhere (v1, or a kernel without
// cgroup.freeze): SIGSTOP and SIGCONT to each member.
//
// One thread of its own; it never waits on the job supervisor's owner
// thread (it reads the jobs through a hook that copies a snapshot). Paused
// trees are resumed when the watch stops, and trees found stopped or frozen
// (an agent killed while they were paused) are adopted as paused, then
// resumed as soon as they fit.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "agents/build/build_governor_policy.h"
#include "agents/build/compile_command.h"
#include "agents/build/peak_history.h"
#include "agents/sys/cgroup_driver.h"
#include "agents/sys/clock.h"
#include "agents/sys/host_fs.h"
#include "agents/sys/process_control.h"

namespace gpuctl::build {

// A running build job, as the watch sees it.
struct BuildJob {
  std::string name;
  std::string run_id;
  std::string cgroup;        // its memory cgroup; a build without one is not governed
  std::string cwd;           // relative sources are keyed under it
  uint64_t budget_bytes = 0; // its cgroup's limit
};

// A build's governing so far, for `train status` and the closing event.
struct BuildStats {
  uint64_t budget_bytes = 0;
  uint64_t headroom_bytes = 0;
  uint32_t running = 0;         // compile trees now
  uint32_t paused = 0;
  uint64_t pauses = 0;          // trees paused, all told
  double paused_seconds = 0;    // tree-seconds spent paused
  uint64_t compiles_done = 0;     // ended on their own
  uint64_t compiles_stopped = 0;  // still running when the build was stopped
  uint64_t in_use_bytes = 0;    // the trees and the rest of the build, now
  uint64_t peak_bytes = 0;
  uint64_t oom_kills = 0;       // the kernel's, in the build's cgroup
  std::string failure;          // set when the governor gave up
};
nlohmann::json BuildStatsJson(const BuildStats& stats);

struct BuildWatchOptions {
  std::chrono::milliseconds interval{250};
  std::string history_path;  // empty: no history kept
  // Headroom below the budget; nullopt: DefaultHeadroom(budget).
  std::optional<uint64_t> headroom_bytes;
  // The host's CPUs: a compile's progress counts the share of them it got
  // (its forecast runs on progress); 0: unknown, never slowed.
  uint32_t cores = 0;
};

// Where a build no longer governed stands, as its job's record says.
enum class BuildOutcome {
  kRunning,    // its end is not recorded yet: asked again at the next tick
  kStopping,   // being stopped: what still runs is stopped, not done
  kSucceeded,  // exited 0: its compiles' peaks and durations are learned
  kFailed,     // any other end: nothing is learned from it
};

struct BuildWatchHooks {
  std::function<std::vector<BuildJob>()> builds;
  // The build cannot fit: record `why` as the run's end, then kill it.
  std::function<void(const BuildJob& build, const std::string& why)> fail;
  // build_throttled, build_failed, build_summary; may be empty.
  std::function<void(const BuildJob& build, const std::string& kind, const std::string& message, nlohmann::json fields)>
      publish;
  // What may still be taken in the memory guard's domain now before its kill
  // line (guard::BudgetOf: available less the reserve), read at each tick; a
  // build's budget was set at its start, and other work in the domain may
  // have grown since. Empty, or nullopt: the budget alone bounds the build.
  std::function<std::optional<uint64_t>()> domain_room;
  // How a build that dropped out of `builds` stands. Only a succeeded build
  // teaches the history: a stopped or killed build's compiles were cut
  // short. Empty: every build counts as succeeded.
  std::function<BuildOutcome(const BuildJob& build)> outcome;
};

class BuildWatch {
 public:
  BuildWatch(BuildWatchOptions options, BuildWatchHooks hooks, sys::CgroupDriver& cgroups,
             sys::ProcessControl& processes, const sys::HostFs& fs, const sys::Clock& clock);
  ~BuildWatch();

  void Start();
  // Stops the thread and resumes every tree it paused. Idempotent.
  void Stop();
  // One pass over every build (the thread's body; tests call it directly).
  void Tick();
  // A running build's figures, or an ended one's (the last kKeptEnded).
  std::optional<BuildStats> Stats(const std::string& run_id) const;
  // The memory guard is about to kill build `run_id`: when more than one of
  // its compiles runs, all but the oldest are paused at once (the thread
  // wakes for it) and true is returned. The governor adopts them as paused
  // and resumes them as they fit. Any thread.
  bool Relieve(const std::string& run_id);
  static constexpr size_t kKeptEnded = 64;

 private:
  struct Run {
    BuildJob job;
    std::unique_ptr<BuildGovernor> governor;
    std::map<std::string, CompileCommand> commands;       // tree id -> its command line
    std::map<std::string, std::vector<int64_t>> members;  // tree id -> pids, as of the last tick
    std::map<std::string, std::vector<int64_t>> running;  // tree id -> its pids not stopped
    std::map<std::string, std::set<int64_t>> ciccs_seen;  // tree id -> its cicc runs so far
    std::set<std::string> paused;
    std::set<std::string> groups;  // tree ids with a pause group (v2), frozen or not
    bool freezer = false;          // pauses freeze (v2, until a freeze fails)
    BuildStats stats;
    std::chrono::steady_clock::time_point last_tick{};
    std::chrono::steady_clock::time_point last_throttle_event{};
    bool failed = false;
    // Compiles that ended while governed, learned only once the build succeeds.
    std::vector<FinishedCompile> to_learn;
    uint32_t ticks_ended_unrecorded = 0;  // out of `builds`, its end not yet recorded
  };
  void Govern(Run& run);
  // Pauses and resumes whole trees as decided; re-stops what of a paused
  // tree still runs.
  void ApplyDecision(Run& run, const std::vector<TreeSample>& samples, const GovernorDecision& decision);
  // The run's figures after a tick, and the finished compiles' peaks.
  void RecordFigures(Run& run, const std::vector<TreeSample>& samples, const GovernorDecision& decision,
                     uint64_t other_bytes);
  // Nullopt when the build's processes cannot be read now: no tick then
  // (an empty list would read as every compile ended).
  std::optional<std::vector<TreeSample>> Sample(Run& run, uint64_t& other_bytes);
  CompileCommand ReadCommand(int64_t pid) const;
  void SignalTree(const Run& run, const std::string& id, int sig);
  // Stops `pids` of tree `id`: frozen in its pause group, or SIGSTOP.
  void PauseTree(Run& run, const std::string& id, const std::vector<int64_t>& pids);
  // False (and the run pauses with SIGSTOP from then on) when it cannot.
  bool FreezeTree(Run& run, const std::string& id, const std::vector<int64_t>& pids);
  void ResumeTree(Run& run, const std::string& id);
  // The build's pause groups: pids of frozen ones; empty ones removed.
  std::set<int64_t> ReadPauseGroups(Run& run);
  void Finish(Run& run, BuildOutcome outcome);
  void SaveHistory(bool force);
  void Publish(const Run& run, const std::string& kind, const std::string& message);

  BuildWatchOptions options_;
  BuildWatchHooks hooks_;
  sys::CgroupDriver& cgroups_;
  sys::ProcessControl& processes_;
  const sys::HostFs& fs_;
  const sys::Clock& clock_;
  const uint64_t page_bytes_;

  // The watch thread's alone (and Tick's, in tests).
  std::map<std::string, Run> runs_;  // by run id
  PeakHistory history_;
  bool history_dirty_ = false;
  std::chrono::steady_clock::time_point history_saved_{};

  mutable std::mutex stats_mutex_;
  std::map<std::string, BuildStats> stats_;
  std::deque<std::string> ended_;  // runs whose figures are kept, oldest first

  std::mutex wake_mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::set<std::string> relief_;  // run ids the guard asked to pause (wake_mutex_)
  // Pauses every running tree of `run` but the oldest (the guard's relief).
  void PauseAllButOldest(Run& run, const std::vector<TreeSample>& samples);
  std::thread thread_;
};

}  // namespace gpuctl::build
