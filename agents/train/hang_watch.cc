#include "agents/train/hang_watch.h"

#include <signal.h>

#include <algorithm>
#include <cmath>
#include <set>

#include <spdlog/spdlog.h>

#include "agents/train/log_ingest.h"
#include "common/event_kinds.h"

namespace gpuctl::train {
namespace {

using std::chrono::duration_cast;
using std::chrono::milliseconds;

int64_t Ms(std::chrono::steady_clock::duration d) { return duration_cast<milliseconds>(d).count(); }

std::string Seconds(int64_t ms) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f s", static_cast<double>(ms) / 1000.0);
  return text;
}

bool Watched(const JobRecord& r) {
  return r.state == JobState::kRunning && r.spec.kind == kJobKindTrain && !r.stop_requested;
}

// The lagging rank, where the ranks disagree: one stopped (SIGSTOP, a
// debugger) while others are not; or, with three ranks or more, the one
// whose innermost frame no other rank shares. Null when nothing tells.
nlohmann::json LaggingRank(const std::vector<ProcessDump>& processes) {
  std::vector<const ProcessDump*> ranked;
  for (const ProcessDump& p : processes) {
    if (p.rank) ranked.push_back(&p);
  }
  std::vector<const ProcessDump*> stopped;
  for (const ProcessDump* p : ranked) {
    if (p->state == 'T' || p->state == 't') stopped.push_back(p);
  }
  if (stopped.size() == 1 && ranked.size() > 1) return *stopped.front()->rank;
  if (ranked.size() >= 3) {
    std::map<std::string, std::vector<const ProcessDump*>> by_frame;
    for (const ProcessDump* p : ranked) {
      if (!p->top_frame.empty()) by_frame[p->top_frame].push_back(p);
    }
    if (by_frame.size() == 2) {
      for (const auto& [frame, ps] : by_frame) {
        if (ps.size() == 1) return *ps.front()->rank;
      }
    }
  }
  return nullptr;
}

}  // namespace

HangWatch::HangWatch(RunSampler& sampler, StackDumper& dumper, JobStopper& stopper,
                     std::function<sys::GpuReport()> read_gpus, HangWatchOptions options)
    : sampler_(sampler),
      dumper_(dumper),
      stopper_(stopper),
      read_gpus_(std::move(read_gpus)),
      options_(options) {}

HangWatch::~HangWatch() {
  // A dump in flight finishes (its files are kept); nothing waits on it.
  for (auto& [run, watch] : watches_) {
    if (watch.dump) watch.dump->wait();
  }
}

bool HangWatch::Dumping() const {
  for (const auto& [run, watch] : watches_) {
    if (watch.dump) return true;
  }
  return false;
}

std::string HangWatch::DumpDirFor(const JobTable& table, const JobRecord& record) {
  return table.store().JobDir(record.spec.name) + "/dumps/" + record.run_id + "-" + std::to_string(table.NowMs());
}

JobPart::TimePoint HangWatch::NextWake(const JobTable& /*table*/, TimePoint now) const {
  if (watches_.empty()) return TimePoint::max();
  TimePoint next = TimePoint::max();
  for (const auto& [run, watch] : watches_) {
    // A dump in flight is polled often; otherwise the next sample.
    next = std::min(next, watch.dump ? now + milliseconds(100) : watch.sampled + options_.sample_interval);
  }
  return next;
}

void HangWatch::Tick(JobTable& table, TimePoint now) {
  std::set<std::string> live;
  std::vector<std::string> names;
  table.ForEach([&](const JobEntry& entry) {
    const JobRecord& r = entry.record;
    if (Watched(r) || watches_.count(r.run_id) > 0) names.push_back(r.spec.name);
  });
  for (const std::string& name : names) {
    JobEntry* entry = table.Find(name);
    if (!entry) continue;
    JobRecord& r = entry->record;
    auto found = watches_.find(r.run_id);
    if (found != watches_.end() && found->second.dump) {
      live.insert(r.run_id);
      std::future<StackDump>& dump = *found->second.dump;
      if (dump.wait_for(milliseconds(0)) == std::future_status::ready) {
        StackDump done = dump.get();
        found->second.dump.reset();
        FinishHang(table, *entry, found->second, std::move(done));
      }
      continue;
    }
    if (!Watched(r)) continue;
    live.insert(r.run_id);
    if (found == watches_.end()) {
      Watch fresh;
      fresh.last_progress = now;
      fresh.step = r.metrics.step;
      fresh.novel_lines = entry->ingest.novel_lines();
      fresh.sampled = now - options_.sample_interval;  // sample at once
      found = watches_.emplace(r.run_id, std::move(fresh)).first;
    }
    if (now - found->second.sampled >= options_.sample_interval) Observe(table, *entry, found->second, now);
  }
  // Runs that ended, or were stopped, are forgotten (their dump, if any,
  // was finished above first).
  for (auto it = watches_.begin(); it != watches_.end();) {
    // A dump still being written is never waited for here (the loop would
    // block): its watch stays until it is done.
    bool writing = it->second.dump && it->second.dump->wait_for(milliseconds(0)) != std::future_status::ready;
    it = live.count(it->first) || writing ? std::next(it) : watches_.erase(it);
  }
}

bool HangWatch::GpusLookStuck(const JobRecord& r, nlohmann::json* seen) const {
  if (!read_gpus_) return false;
  std::set<uint32_t> mine;
  for (const JobGpuMemory& m : r.gpu_memory) mine.insert(m.index);
  if (mine.empty()) return false;
  bool stuck = false;
  sys::GpuReport report = read_gpus_();
  for (const sys::GpuDevice& gpu : report.devices) {
    if (!mine.count(gpu.index)) continue;
    nlohmann::json g = {{"index", gpu.index}};
    if (gpu.utilization_gpu_pct) g["utilization_pct"] = *gpu.utilization_gpu_pct;
    if (gpu.power_draw_w) g["power_w"] = *gpu.power_draw_w;
    if (gpu.power_limit_w) g["power_limit_w"] = *gpu.power_limit_w;
    bool busy_at_low_power = gpu.utilization_gpu_pct && gpu.power_draw_w && gpu.power_limit_w &&
                             *gpu.utilization_gpu_pct >= options_.stuck_utilization_pct &&
                             *gpu.power_draw_w < options_.stuck_power_fraction * *gpu.power_limit_w;
    g["stuck_pattern"] = busy_at_low_power;
    stuck = stuck || busy_at_low_power;
    if (seen) seen->push_back(std::move(g));
  }
  return stuck;
}

void HangWatch::Observe(JobTable& table, JobEntry& entry, Watch& w, TimePoint now) {
  JobRecord& r = entry.record;
  const int64_t elapsed_ms = std::max<int64_t>(Ms(now - w.sampled), 1);
  w.sampled = now;
  std::string progressed;
  // A new step: also what the learned budget is made of.
  if (r.metrics.step && r.metrics.step != w.step) {
    if (w.steps_seen && w.step && *r.metrics.step > *w.step) w.intervals.Add(Ms(now - w.last_step_at));
    w.steps_seen = true;
    w.last_step_at = now;
    w.step = r.metrics.step;
    progressed = "step " + std::to_string(*r.metrics.step);
  }
  if (progressed.empty() && entry.ingest.novel_lines() != w.novel_lines) progressed = "log output";
  w.novel_lines = entry.ingest.novel_lines();
  // CPU time, per process: which stood still is part of a hang's report.
  std::vector<RunProcess> processes = sampler_.Sample(r, /*details=*/false);
  uint64_t delta_ticks = 0;
  std::map<int64_t, uint64_t> ticks;
  w.cpu_still.clear();
  for (const RunProcess& p : processes) {
    ticks[p.pid] = p.cpu_ticks;
    auto before = w.cpu_ticks.find(p.pid);
    uint64_t moved = before == w.cpu_ticks.end() || p.cpu_ticks < before->second ? 0 : p.cpu_ticks - before->second;
    delta_ticks += moved;
    if (before != w.cpu_ticks.end()) w.cpu_still[p.pid] = moved == 0;
  }
  bool first_sample = w.cpu_ticks.empty();
  w.cpu_ticks = std::move(ticks);
  if (progressed.empty() && !first_sample) {
    double cores = static_cast<double>(delta_ticks) / static_cast<double>(options_.ticks_per_second) /
                   (static_cast<double>(elapsed_ms) / 1000.0);
    if (cores >= options_.cpu_busy_fraction && !GpusLookStuck(r, nullptr)) progressed = "CPU time";
  }
  // The checkpoint tree, walked only while nothing else said the run moves,
  // often enough that a quiet save is seen within a quarter of the budget.
  HangBudget budget = DecideHangBudget(r.spec.hang, w.steps_seen, w.intervals);
  const auto walk_every = std::clamp<std::chrono::steady_clock::duration>(
      milliseconds(budget.ms / 4), options_.sample_interval, options_.checkpoint_interval);
  if (progressed.empty() && !r.spec.checkpoint.dir.empty() && now - w.checkpoint_checked >= walk_every) {
    w.checkpoint_checked = now;
    sys::TreeSignature sig = sys::SignatureOf(r.spec.checkpoint.dir);
    if (w.checkpoint && *w.checkpoint != sig) progressed = "checkpoint written";
    w.checkpoint = sig;
  }

  if (!progressed.empty()) {
    w.last_progress = now;
    w.last_progress_what = progressed;
    if (w.hung) {
      w.hung = false;
      r.progress.hung_since_unix_ms = 0;
      spdlog::info("job '{}' (run {}): progress again ({}) after a hang", r.spec.name, r.run_id, progressed);
    }
  }
  const int64_t quiet_ms = Ms(now - w.last_progress);
  // What `train status` shows, published at most every 5 s unless it says
  // something new.
  const int64_t last_progress_unix_ms = table.NowMs() - quiet_ms;
  bool changed = r.progress.budget_ms != budget.ms || r.progress.last_progress != w.last_progress_what;
  r.progress.last_progress_unix_ms = last_progress_unix_ms;
  r.progress.last_progress = w.last_progress_what;
  r.progress.budget_ms = budget.ms;
  r.progress.budget_source = budget.source;
  if (changed || now - w.published >= std::chrono::seconds(5)) {
    w.published = now;
    table.Publish(entry);
  }
  if (!w.hung && quiet_ms > budget.ms) DeclareHung(table, entry, w, now, budget);
}

void HangWatch::DeclareHung(JobTable& table, JobEntry& entry, Watch& w, TimePoint now, const HangBudget& budget) {
  JobRecord& r = entry.record;
  w.hung = true;
  const int64_t quiet_ms = Ms(now - w.last_progress);
  r.progress.hung_since_unix_ms = table.NowMs();
  w.hang_reason = "hung: no progress for " + Seconds(quiet_ms) + " (budget " + Seconds(budget.ms) + ", " +
                  budget.source + "; last: " + w.last_progress_what + ")";
  nlohmann::json gpus = nlohmann::json::array();
  GpusLookStuck(r, &gpus);
  nlohmann::json still = nlohmann::json::array();
  for (const auto& [pid, is_still] : w.cpu_still) {
    if (is_still) still.push_back(pid);
  }
  w.hang_fields = {{"last_step", r.metrics.step ? nlohmann::json(*r.metrics.step) : nlohmann::json(nullptr)},
                   {"seconds_since_progress", static_cast<double>(quiet_ms) / 1000.0},
                   {"last_progress", w.last_progress_what},
                   {"budget_seconds", static_cast<double>(budget.ms) / 1000.0},
                   {"budget_source", budget.source},
                   {"cpu_still_pids", still},
                   {"gpus", gpus},
                   {"policy", OnHangName(r.spec.hang.policy)}};
  spdlog::warn("job '{}' (run {}): {}; dumping its stacks", r.spec.name, r.run_id, w.hang_reason);
  std::vector<RunProcess> processes = sampler_.Sample(r, /*details=*/true);
  const std::string dir = DumpDirFor(table, r);
  r.progress.dump_dir = dir;
  (void)table.Save(entry);
  table.Publish(entry);
  JobRecord copy = r;
  StackDumper& dumper = dumper_;
  w.dump = std::async(std::launch::async, [&dumper, copy = std::move(copy), processes = std::move(processes), dir] {
    return dumper.Dump(copy, processes, dir);
  });
}

void HangWatch::FinishHang(JobTable& table, JobEntry& entry, Watch& w, StackDump dump) {
  JobRecord& r = entry.record;
  nlohmann::json fields = w.hang_fields;
  fields["dump_dir"] = dump.dir;
  if (!dump.error.empty()) fields["dump_error"] = dump.error;
  nlohmann::json ranks = nlohmann::json::array();
  for (const ProcessDump& p : dump.processes) {
    nlohmann::json one = {{"pid", p.pid}, {"state", std::string(1, p.state)}, {"method", p.method}};
    one["rank"] = p.rank ? nlohmann::json(*p.rank) : nlohmann::json(nullptr);
    auto still = w.cpu_still.find(p.pid);
    one["cpu_still"] = still != w.cpu_still.end() && still->second;
    if (!p.top_frame.empty()) one["top_frame"] = p.top_frame;
    ranks.push_back(std::move(one));
  }
  fields["processes"] = ranks;
  fields["lagging_rank"] = LaggingRank(dump.processes);
  const std::string message = w.hang_reason + "; stacks in " + dump.dir;
  table.PublishEvent(event_kind::kJobHung, r, message, fields);
  if (r.spec.hang.policy == OnHang::kDump || !IsActive(r.state) || r.stop_requested) return;
  const bool relaunch = r.spec.hang.policy == OnHang::kRecover;
  spdlog::warn("job '{}' (run {}): stopping it for the hang{}", r.spec.name, r.run_id,
               relaunch ? ", to relaunch it from its last complete checkpoint" : "");
  Result<JobRecord> stopped =
      stopper_.BeginAgentStop(r.spec.name, options_.stop_grace, {w.hang_reason + " (stacks in " + dump.dir + ")", relaunch, "hang"});
  if (!stopped.ok()) spdlog::error("job '{}': the stop for its hang failed: {}", r.spec.name, stopped.status().message());
}

}  // namespace gpuctl::train
