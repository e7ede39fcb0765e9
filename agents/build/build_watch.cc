#include "agents/build/build_watch.h"

#include <algorithm>
#include <csignal>

#include <spdlog/spdlog.h>

#include "agents/build/compile_trees.h"
#include "agents/sys/proc_stat.h"
#include "common/event_kinds.h"
#include "common/units.h"

namespace gpuctl::build {
namespace {

constexpr std::chrono::seconds kThrottleEventEvery{30};
constexpr std::chrono::seconds kHistorySaveEvery{10};
// A build drops out of the running list as its end is recorded; the record
// may lag by a moment. Past this many ticks it is taken as not succeeded.
constexpr uint32_t kEndRecordedWithinTicks = 8;

std::string TreeId(const CompileTree& tree) {
  return std::to_string(tree.root_pid) + ":" + std::to_string(tree.root_start_ticks);
}

// A tree's pause group, "compile-PID-START" below the build's cgroup, and back.
constexpr std::string_view kGroupPrefix = "compile-";
std::string PauseGroup(const std::string& cgroup, const std::string& tree_id) {
  std::string name = tree_id;
  std::replace(name.begin(), name.end(), ':', '-');
  return cgroup + "/" + std::string(kGroupPrefix) + name;
}
std::optional<std::string> TreeIdOfGroup(const std::string& group) {
  const std::string name = group.substr(group.rfind('/') + 1);
  if (!name.starts_with(kGroupPrefix)) return std::nullopt;
  std::string id = name.substr(kGroupPrefix.size());
  const size_t dash = id.find('-');
  if (dash == std::string::npos) return std::nullopt;
  id[dash] = ':';
  return id;
}

std::vector<std::string> SplitNul(const std::string& text) {
  std::vector<std::string> args;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\0', start);
    if (end == std::string::npos) end = text.size();
    args.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return args;
}

}  // namespace

nlohmann::json BuildStatsJson(const BuildStats& stats) {
  return {{"budget_bytes", stats.budget_bytes},     {"headroom_bytes", stats.headroom_bytes},
          {"running", stats.running},               {"paused", stats.paused},
          {"pauses", stats.pauses},                 {"paused_seconds", stats.paused_seconds},
          {"compiles_done", stats.compiles_done},   {"compiles_stopped", stats.compiles_stopped},
          {"in_use_bytes", stats.in_use_bytes},
          {"peak_bytes", stats.peak_bytes},         {"oom_kills", stats.oom_kills},
          {"failure", stats.failure}};
}

BuildWatch::BuildWatch(BuildWatchOptions options, BuildWatchHooks hooks, sys::CgroupDriver& cgroups,
                       sys::ProcessControl& processes, const sys::HostFs& fs, const sys::Clock& clock)
    : options_(std::move(options)),
      hooks_(std::move(hooks)),
      cgroups_(cgroups),
      processes_(processes),
      fs_(fs),
      clock_(clock),
      page_bytes_(sys::PageBytes()) {
  if (!options_.history_path.empty()) {
    auto loaded = PeakHistory::Load(options_.history_path);
    if (loaded.ok()) {
      history_ = std::move(*loaded);
    } else {
      spdlog::warn("build peak history {} not used: {}", options_.history_path, loaded.status().message());
    }
  }
}

BuildWatch::~BuildWatch() { Stop(); }

void BuildWatch::Start() {
  thread_ = std::thread([this] {
    std::unique_lock lock(wake_mutex_);
    while (!stopping_) {
      lock.unlock();
      Tick();
      lock.lock();
      clock_.WaitUntil(lock, wake_, clock_.SteadyNow() + options_.interval,
                       [this] { return stopping_ || !relief_.empty(); });
    }
  });
}

void BuildWatch::Stop() {
  {
    std::lock_guard lock(wake_mutex_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  // Nothing stays frozen behind a stopped agent.
  for (auto& [run_id, run] : runs_) {
    for (const std::string& id : run.paused) ResumeTree(run, id);
    run.paused.clear();
  }
  SaveHistory(true);
}

void BuildWatch::Tick() {
  std::vector<BuildJob> builds = hooks_.builds ? hooks_.builds() : std::vector<BuildJob>{};
  std::set<std::string> live;
  for (const BuildJob& job : builds) {
    if (job.cgroup.empty() || job.budget_bytes == 0) continue;
    live.insert(job.run_id);
    auto [it, fresh] = runs_.try_emplace(job.run_id);
    Run& run = it->second;
    if (fresh) {
      GovernorConfig config{.budget_bytes = job.budget_bytes,
                            .headroom_bytes = options_.headroom_bytes.value_or(DefaultHeadroom(job.budget_bytes))};
      run.job = job;
      config.tick_seconds = std::chrono::duration<double>(options_.interval).count();
      config.cores = options_.cores;
      run.governor = std::make_unique<BuildGovernor>(config, history_.Peaks(), history_.Seconds(), history_.Curves());
      run.stats.budget_bytes = config.budget_bytes;
      run.stats.headroom_bytes = config.headroom_bytes;
      run.last_tick = clock_.SteadyNow();
      run.freezer = cgroups_.version() == sys::CgroupVersion::kV2;
    }
    if (!run.failed) Govern(run);
  }
  for (auto it = runs_.begin(); it != runs_.end();) {
    if (live.count(it->first) != 0) {
      ++it;
      continue;
    }
    const BuildOutcome outcome = hooks_.outcome ? hooks_.outcome(it->second.job) : BuildOutcome::kSucceeded;
    if (outcome == BuildOutcome::kRunning && ++it->second.ticks_ended_unrecorded < kEndRecordedWithinTicks) {
      ++it;  // ended, its end not recorded yet: asked again at the next tick
      continue;
    }
    Finish(it->second, outcome);
    {
      std::lock_guard lock(stats_mutex_);
      ended_.push_back(it->first);
      while (ended_.size() > kKeptEnded) {
        stats_.erase(ended_.front());
        ended_.pop_front();
      }
    }
    it = runs_.erase(it);
  }
  {
    // Relief asked for a run that ended, failed or was not read this tick
    // must not keep the thread from sleeping.
    std::lock_guard lock(wake_mutex_);
    relief_.clear();
  }
  SaveHistory(false);
}

CompileCommand BuildWatch::ReadCommand(int64_t pid) const {
  auto cmdline = fs_.ReadFile("proc/" + std::to_string(pid) + "/cmdline");
  return cmdline.ok() ? ParseCompileCommand(SplitNul(*cmdline)) : CompileCommand{};
}

std::optional<std::vector<TreeSample>> BuildWatch::Sample(Run& run, uint64_t& other_bytes) {
  std::vector<TreeSample> samples;
  auto pids = cgroups_.Processes(run.job.cgroup);  // the pause groups' included
  if (!pids.ok()) return std::nullopt;
  const std::set<int64_t> frozen = ReadPauseGroups(run);
  std::vector<sys::ProcStat> processes;
  for (int64_t pid : *pids) {
    auto text = fs_.ReadFile("proc/" + std::to_string(pid) + "/stat");
    if (!text.ok()) continue;  // exited meanwhile
    auto stat = sys::ParseProcStat(*text);
    if (stat.ok()) processes.push_back(std::move(*stat));
  }
  BuildProcesses grouped = GroupCompileTrees(processes, page_bytes_, [this](int64_t child, int64_t parent) {
    return processes_.SameAddressSpace(child, parent);
  });
  std::map<std::string, CompileCommand> commands;
  std::map<std::string, std::set<int64_t>> ciccs_seen;
  run.members.clear();
  run.running.clear();
  uint64_t in_trees = 0;
  for (const CompileTree& tree : grouped.trees) {
    std::string id = TreeId(tree);
    auto known = run.commands.find(id);
    CompileCommand command = known != run.commands.end() ? known->second : ReadCommand(tree.root_pid);
    if (!command.source.empty() && command.source[0] != '/' && !run.job.cwd.empty()) {
      command.source = run.job.cwd + "/" + command.source;
    }
    commands[id] = command;
    run.members[id] = tree.pids;
    // A frozen member is stopped as surely as one in state T.
    std::vector<int64_t>& running = run.running[id] = tree.running;
    std::erase_if(running, [&](int64_t pid) { return frozen.count(pid) != 0; });
    const bool stopped = tree.stopped || running.empty();
    in_trees += tree.rss_bytes;
    TreeSample sample{.id = id, .program = tree.program, .source = command.source, .archs = command.archs,
                      .threads = command.threads, .rss_bytes = tree.rss_bytes, .stopped = stopped,
                      .device_compiles_done = std::nullopt, .busy = tree.busy};
    if (tree.program == "nvcc") {
      // A cicc seen before and gone now has ended: one arch's peak is over.
      std::set<int64_t>& seen = ciccs_seen[id] = run.ciccs_seen[id];
      seen.insert(tree.cicc_pids.begin(), tree.cicc_pids.end());
      sample.device_compiles_done = static_cast<uint32_t>(seen.size() - tree.cicc_pids.size());
    }
    samples.push_back(std::move(sample));
  }
  run.commands = std::move(commands);  // ended trees drop out
  run.ciccs_seen = std::move(ciccs_seen);
  // The cgroup's charge, less reclaimable cache, less the trees: memory the
  // build holds outside its compiles (ninja, python, tmpfs). /proc's RSS of
  // the non-compilers is the floor when the cgroup cannot be read.
  other_bytes = grouped.other_rss_bytes;
  auto current = cgroups_.MemoryCurrent(run.job.cgroup);
  auto reclaimable = cgroups_.ReclaimableFile(run.job.cgroup);
  if (current.ok()) {
    uint64_t charged = *current - std::min(*current, reclaimable.ok() ? *reclaimable : 0);
    if (charged > in_trees) other_bytes = std::max(other_bytes, charged - in_trees);
  }
  return samples;
}

void BuildWatch::SignalTree(const Run& run, const std::string& id, int sig) {
  auto members = run.members.find(id);
  if (members == run.members.end()) return;
  for (int64_t pid : members->second) (void)processes_.Signal(pid, sig);
}

std::set<int64_t> BuildWatch::ReadPauseGroups(Run& run) {
  std::set<int64_t> frozen;
  if (cgroups_.version() != sys::CgroupVersion::kV2) return frozen;
  auto children = cgroups_.Children(run.job.cgroup);
  if (!children.ok()) return frozen;
  for (const std::string& group : *children) {
    std::optional<std::string> id = TreeIdOfGroup(group);
    if (!id) continue;  // not ours: the build made it
    auto pids = cgroups_.Processes(group);
    if (!pids.ok()) continue;
    if (pids->empty()) {  // its compile ended
      (void)cgroups_.RemoveCgroup(group);
      run.groups.erase(*id);
      continue;
    }
    run.groups.insert(*id);  // an earlier agent's, too: thawed when it may run
    if (cgroups_.Frozen(group).value_or(false)) frozen.insert(pids->begin(), pids->end());
  }
  return frozen;
}

bool BuildWatch::FreezeTree(Run& run, const std::string& id, const std::vector<int64_t>& pids) {
  const std::string group = PauseGroup(run.job.cgroup, id);
  Status made = cgroups_.CreateSubgroup(group);
  if (made.ok() || made.code() == ErrorCode::kAlreadyExists) {
    run.groups.insert(id);
    // A member gone meanwhile has nothing left to pause.
    for (int64_t pid : pids) (void)cgroups_.AddProcess(group, pid);
    made = cgroups_.SetFrozen(group, true);
    if (made.ok()) return true;
  }
  spdlog::warn("build '{}': cannot freeze compile {} ({}); pausing its compiles with SIGSTOP instead", run.job.name,
               id, made.message());
  run.freezer = false;
  return false;
}

void BuildWatch::PauseTree(Run& run, const std::string& id, const std::vector<int64_t>& pids) {
  if (pids.empty()) return;
  if (run.freezer && FreezeTree(run, id, pids)) return;
  for (int64_t pid : pids) (void)processes_.Signal(pid, SIGSTOP);
}

void BuildWatch::ResumeTree(Run& run, const std::string& id) {
  if (run.groups.count(id) != 0) (void)cgroups_.SetFrozen(PauseGroup(run.job.cgroup, id), false);
  // Also what SIGSTOP stopped: this agent's fallback, or an earlier agent's.
  SignalTree(run, id, SIGCONT);
}

void BuildWatch::ApplyDecision(Run& run, const std::vector<TreeSample>& samples, const GovernorDecision& decision) {
  for (const std::string& id : decision.pause) run.paused.insert(id);
  // Trees found stopped (an earlier agent paused them) that stay paused are
  // this watch's to resume, at the latest when it stops.
  for (const TreeSample& sample : samples) {
    bool resumed = std::find(decision.resume.begin(), decision.resume.end(), sample.id) != decision.resume.end();
    if (sample.stopped && !resumed) run.paused.insert(sample.id);
  }
  for (const std::string& id : decision.resume) {
    run.paused.erase(id);
    ResumeTree(run, id);
  }
  // Every tick, not only at the pause: a child the root forked just before
  // its SIGSTOP, or outside its pause group, would otherwise run on. Only
  // what is not stopped yet.
  std::erase_if(run.paused, [&](const std::string& id) { return run.members.count(id) == 0; });
  for (const std::string& id : run.paused) PauseTree(run, id, run.running[id]);

}

void BuildWatch::RecordFigures(Run& run, const std::vector<TreeSample>& samples, const GovernorDecision& decision,
                               uint64_t other_bytes) {
  auto now = clock_.SteadyNow();
  double elapsed = std::chrono::duration<double>(now - run.last_tick).count();
  run.last_tick = now;
  BuildStats& stats = run.stats;
  stats.paused_seconds += elapsed * static_cast<double>(run.paused.size());
  stats.running = decision.running;
  stats.paused = decision.paused;
  stats.pauses = run.governor->pauses();
  stats.in_use_bytes = other_bytes;
  for (const TreeSample& sample : samples) stats.in_use_bytes += sample.rss_bytes;
  stats.peak_bytes = std::max(stats.peak_bytes, stats.in_use_bytes);
  if (auto kills = cgroups_.OomKillCount(run.job.cgroup); kills.ok()) stats.oom_kills = *kills;
  std::vector<FinishedCompile> finished = run.governor->TakeFinished();
  stats.compiles_done += finished.size();
  run.to_learn.insert(run.to_learn.end(), finished.begin(), finished.end());
}

void BuildWatch::Govern(Run& run) {
  uint64_t other = 0;
  std::optional<std::vector<TreeSample>> sampled = Sample(run, other);
  if (!sampled) return;
  const std::vector<TreeSample>& samples = *sampled;
  // The guard's domain may have less room than the budget left the build
  // (other work grew): what the build cannot have counts as memory taken
  // outside its compiles, so the governor pauses before the guard's line.
  if (std::optional<uint64_t> room = hooks_.domain_room ? hooks_.domain_room() : std::nullopt) {
    uint64_t held = 0;
    for (const TreeSample& sample : samples) held += sample.rss_bytes;
    const uint64_t budget_left = run.job.budget_bytes - std::min(run.job.budget_bytes, held + other);
    if (budget_left > *room) other += budget_left - *room;
  }
  GovernorDecision decision = run.governor->Tick(samples, other);
  if (spdlog::should_log(spdlog::level::debug)) {
    for (const TreeSample& sample : samples) {
      spdlog::debug("build '{}': tree {} {} {}: {} now, {} device compiles done, predicted peak {}", run.job.name,
                    sample.id, sample.program, sample.source, FormatBytes(sample.rss_bytes),
                    sample.device_compiles_done.value_or(0), FormatBytes(run.governor->PredictedPeak(sample.id)));
    }
    spdlog::debug("build '{}': other {}, planned {}, {} running, {} paused", run.job.name, FormatBytes(other),
                  FormatBytes(decision.planned_bytes), decision.running, decision.paused);
  }
  ApplyDecision(run, samples, decision);
  bool relief = false;
  {
    std::lock_guard lock(wake_mutex_);
    relief = relief_.erase(run.job.run_id) > 0;
  }
  if (relief) PauseAllButOldest(run, samples);
  RecordFigures(run, samples, decision, other);
  BuildStats& stats = run.stats;
  auto now = run.last_tick;
  if (!decision.pause.empty() && now - run.last_throttle_event >= kThrottleEventEvery) {
    run.last_throttle_event = now;
    Publish(run, event_kind::kBuildThrottled,
            "paused " + std::to_string(decision.paused) + " of " + std::to_string(samples.size()) +
                " compiles so that what the running ones may reach (" + FormatBytes(decision.planned_bytes) +
                ") fits the budget of " + FormatBytes(stats.budget_bytes));
  }
  if (decision.fail) {
    run.failed = true;
    stats.failure = *decision.fail;
    // Its compiles are killed, not resumed: the cgroup goes as a whole.
    run.paused.clear();
    Publish(run, event_kind::kBuildFailed, *decision.fail);
    if (hooks_.fail) hooks_.fail(run.job, *decision.fail);
  }
  std::lock_guard lock(stats_mutex_);
  stats_[run.job.run_id] = stats;
}

bool BuildWatch::Relieve(const std::string& run_id) {
  {
    std::lock_guard lock(stats_mutex_);
    auto it = stats_.find(run_id);
    if (it == stats_.end() || it->second.running <= 1 || !it->second.failure.empty()) return false;
  }
  {
    std::lock_guard lock(wake_mutex_);
    relief_.insert(run_id);
  }
  wake_.notify_all();
  return true;
}

void BuildWatch::PauseAllButOldest(Run& run, const std::vector<TreeSample>& samples) {
  // The oldest running tree goes on (work is never stopped while one
  // compile can run); the tree id is "PID:START_TICKS".
  auto start_ticks = [](const std::string& id) { return std::stoull(id.substr(id.find(':') + 1)); };
  const TreeSample* oldest = nullptr;
  for (const TreeSample& sample : samples) {
    if (sample.stopped || run.paused.count(sample.id) != 0) continue;
    if (!oldest || start_ticks(sample.id) < start_ticks(oldest->id)) oldest = &sample;
  }
  size_t paused = 0;
  for (const TreeSample& sample : samples) {
    if (&sample == oldest || sample.stopped || run.paused.count(sample.id) != 0) continue;
    run.paused.insert(sample.id);
    PauseTree(run, sample.id, run.running[sample.id]);
    ++paused;
  }
  if (paused > 0) {
    Publish(run, event_kind::kBuildThrottled,
            "paused " + std::to_string(paused) + " compiles at once: the memory guard's line is near (" +
                FormatBytes(run.stats.budget_bytes) + " budget)");
  }
}

void BuildWatch::Finish(Run& run, BuildOutcome outcome) {
  for (const std::string& id : run.paused) ResumeTree(run, id);
  BuildStats& stats = run.stats;
  // The compiles that ended with the build, since its last tick: counted,
  // not kept as peaks (a stopped or failed build's were cut short). Those of
  // a build being stopped still run: they are stopped, not done.
  run.governor->Tick({}, 0);
  const size_t at_end = run.governor->TakeFinished().size();
  (outcome == BuildOutcome::kStopping ? stats.compiles_stopped : stats.compiles_done) += at_end;
  // Only a build that exited 0 teaches: a compile of a stopped, failed or
  // killed one may have been cut short at any point.
  if (outcome == BuildOutcome::kSucceeded && !run.to_learn.empty()) {
    history_.Record(run.to_learn);
    history_dirty_ = true;
  }
  stats.running = stats.paused = 0;
  stats.in_use_bytes = 0;
  {
    std::lock_guard lock(stats_mutex_);
    stats_[run.job.run_id] = stats;
  }
  Publish(run, event_kind::kBuildSummary,
          std::to_string(stats.compiles_done) + " compiles governed" +
              (stats.compiles_stopped > 0 ? " (and " + std::to_string(stats.compiles_stopped) + " stopped)" : "") +
              "; peak " + FormatBytes(stats.peak_bytes) + " of " +
              FormatBytes(stats.budget_bytes) + "; " + std::to_string(stats.pauses) + " pauses, " +
              std::to_string(static_cast<uint64_t>(stats.paused_seconds)) + " compile-seconds paused");
}

void BuildWatch::Publish(const Run& run, const std::string& kind, const std::string& message) {
  spdlog::info("build '{}' (run {}): {}: {}", run.job.name, run.job.run_id, kind, message);
  if (hooks_.publish) hooks_.publish(run.job, kind, message, BuildStatsJson(run.stats));
}

void BuildWatch::SaveHistory(bool force) {
  if (!history_dirty_ || options_.history_path.empty()) return;
  auto now = clock_.SteadyNow();
  if (!force && now - history_saved_ < kHistorySaveEvery) return;
  history_saved_ = now;
  history_dirty_ = false;
  if (Status s = history_.Save(options_.history_path); !s.ok()) {
    spdlog::warn("build peak history not saved: {}", s.message());
  }
}

std::optional<BuildStats> BuildWatch::Stats(const std::string& run_id) const {
  std::lock_guard lock(stats_mutex_);
  auto it = stats_.find(run_id);
  if (it == stats_.end()) return std::nullopt;
  return it->second;
}

}  // namespace gpuctl::build
