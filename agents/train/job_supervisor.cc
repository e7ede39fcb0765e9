// The job supervisor's public side: each call posted to the owner loop,
// answered from the table's snapshots.
#include "agents/train/job_supervisor.h"

namespace gpuctl::train {
namespace {

// How long a read waits for the owner before answering from the snapshot.
constexpr std::chrono::milliseconds kReadWait{200};
// How long a start or stop may sit in the queue behind other work.
constexpr std::chrono::milliseconds kCommandWait{60'000};
// A run on a faulted GPU gets this long to save itself (its GPU may be
// gone: it often cannot).
constexpr std::chrono::seconds kGpuFaultStopGrace{10};
// Log bytes a read folds in before answering (the owner reads the rest).
constexpr size_t kReadIngestBytes = 4 << 20;

Status Stopping() { return Unavailable("gpuctld is stopping or its job supervisor is busy; try again"); }

}  // namespace

JobSupervisor::JobSupervisor(JobSupervisorOptions options, sys::Tmux& tmux, sys::ProcessControl& processes,
                             sys::CommandRunner& runner, const sys::Clock& clock)
    : options_(std::move(options)),
      store_(options_.state_dir),
      launcher_({.lxc_rootfs_template = options_.lxc_rootfs_template,
                 .container_state_dir = options_.container_state_dir,
                 .pct = options_.pct,
                 .cgroups = options_.cgroups,
                 .cgroup_parent = options_.cgroup_parent,
                 .default_mem_limit_bytes = options_.default_mem_limit_bytes,
                 .tmux_socket = options_.tmux_socket,
                 .agent_env = options_.agent_env},
                store_, tmux, processes, runner),
      table_(store_, clock, options_.publish),
      guard_(options_.default_cwd),
      processes_(processes, options_.cgroups),
      unreadable_(table_, launcher_, processes_, tmux),
      host_fs_(options_.host_root),
      proc_sampler_(host_fs_, options_.cgroups, clock),
      proc_dumper_(host_fs_, runner, clock, options_.agent_path),
      sampler_(options_.sampler ? *options_.sampler : proc_sampler_),
      dumper_(options_.dumper ? *options_.dumper : proc_dumper_),
      monitor_(table_, parts_, processes_, unreadable_, guard_, launcher_, tmux, options_.monitor_interval),
      stops_(monitor_, processes_),
      queue_(table_, options_.read_gpus, options_.gpu_busy_below_bytes, processes, commands_),
      ooms_(commands_),
      hangs_(sampler_, dumper_, commands_, options_.read_gpus, options_.hang),
      relaunches_(commands_),
      gpu_memory_(options_.read_gpus, options_.gpu_memory_interval, processes),
      reconciliation_(tmux, launcher_, monitor_, unreadable_, guard_),
      commands_(table_, launcher_, monitor_, queue_, unreadable_, processes_, guard_, options_.default_cwd),
      loop_(table_, parts_, clock) {
  parts_.Add(reconciliation_);
  parts_.Add(monitor_);
  parts_.Add(stops_);
  parts_.Add(ooms_);
  parts_.Add(hangs_);
  parts_.Add(relaunches_);
  parts_.Add(gpu_memory_);
  parts_.Add(queue_);
}

JobSupervisor::~JobSupervisor() { Shutdown(); }

void JobSupervisor::Start() { loop_.Start(); }

void JobSupervisor::Shutdown() {
  // A stop waiting out its grace for a client answers now (the stop is
  // recorded: the next agent finishes it), so no call holds the agent.
  table_.ReleaseWaiters();
  loop_.Shutdown();
}

Result<JobRecord> JobSupervisor::StartJob(JobSpec spec) {
  if (Status s = ValidateJobSpec(spec); !s.ok()) return s;
  Result<JobRecord> result = Stopping();
  if (!loop_.RunOnOwner([&] { result = commands_.StartRun(std::move(spec), {}, /*admitted=*/false); },
                        kCommandWait)) {
    return Stopping();
  }
  return result;
}

Result<JobRecord> JobSupervisor::GetJob(const std::string& name) {
  // Fold in what the job did since the last tick; a busy owner is not
  // waited for long: the snapshot answers.
  loop_.RunOnOwner(
      [&] {
        if (JobEntry* entry = table_.Find(name)) monitor_.Refresh(*entry, kReadIngestBytes);
      },
      kReadWait);
  std::shared_ptr<const JobRecord> record = table_.Snapshot(name);
  if (!record) return NotFound("no job named '" + name + "' (see gpuctl train list)");
  return *record;
}

std::vector<JobRecord> JobSupervisor::ListJobs() {
  loop_.RunOnOwner(
      [&] {
        table_.ForEach([&](JobEntry& entry) {
          if (IsActive(entry.record.state) || LogIngest::Behind(entry.record)) {
            monitor_.Refresh(entry, RunMonitor::kTickIngestBytes);
          }
        });
      },
      kReadWait);
  return table_.SnapshotAll();
}

Result<JobRecord> JobSupervisor::StopJob(const std::string& name, std::chrono::milliseconds grace) {
  Result<JobRecord> begun = Stopping();
  if (!loop_.RunOnOwner([&] { begun = commands_.BeginStop(name, grace); }, kCommandWait)) return Stopping();
  if (!begun.ok() || (!IsActive(begun->state) && !begun->stop_requested)) return begun;
  table_.WaitForEnd(name, table_.clock().SteadyNow() + grace + std::chrono::seconds(15));
  std::shared_ptr<const JobRecord> record = table_.Snapshot(name);
  if (!record) return NotFound("job '" + name + "' was removed while it stopped");
  return *record;
}

Result<JobRecord> JobSupervisor::RemoveJob(const std::string& name, const std::string& only_run) {
  Result<JobRecord> result = Stopping();
  if (!loop_.RunOnOwner([&] { result = commands_.Remove(name, only_run); }, kCommandWait)) return Stopping();
  return result;
}

Result<LogSource> JobSupervisor::GetLogSource(const std::string& name) {
  std::shared_ptr<const JobRecord> record = table_.Snapshot(name);
  if (!record) return NotFound("no job named '" + name + "' (see gpuctl train list)");
  if (record->state == JobState::kQueued) {
    return FailedPrecondition("job '" + name + "' is queued (waiting for " + record->waiting_for +
                              "): it has no log until it starts");
  }
  if (IsActive(record->state) && table_.EndCheckDue(name)) {
    // Followers ask at each end of file: only the cheap end-of-job check,
    // never log parsing, which the owner does on its own.
    loop_.RunOnOwner(
        [&] {
          if (JobEntry* entry = table_.Find(name)) monitor_.Refresh(*entry, 0);
        },
        kReadWait);
    if (auto fresh = table_.Snapshot(name)) record = fresh;
  }
  return LogSource{record->log_path, !IsActive(record->state)};
}

Result<StackDump> JobSupervisor::DumpJob(const std::string& name) {
  Result<JobRecord> record = Stopping();
  std::vector<RunProcess> processes;
  std::string dir;
  if (!loop_.RunOnOwner(
          [&] {
            JobEntry* entry = table_.Find(name);
            if (!entry) {
              record = NotFound("no job named '" + name + "' (see gpuctl train list)");
              return;
            }
            monitor_.Refresh(*entry, 0);
            JobRecord& r = entry->record;
            if (!IsActive(r.state)) {
              record = FailedPrecondition("job '" + name + "' is " + JobStateName(r.state) +
                                          ": it has no processes to dump");
              return;
            }
            processes = sampler_.Sample(r, /*details=*/true);
            dir = HangWatch::DumpDirFor(table_, r);
            r.progress.dump_dir = dir;
            table_.Publish(*entry);
            record = r;
          },
          kCommandWait)) {
    return Stopping();
  }
  if (!record.ok()) return record.status();
  // The dump itself runs here, on the caller's thread: py-spy takes seconds,
  // and the owner goes on meanwhile.
  return dumper_.Dump(*record, processes, dir);
}

namespace {

// Whether the run was given GPU `index` (`uuid`), or its processes were
// seen on it.
bool UsesGpu(const JobRecord& r, uint32_t index, const std::string& uuid) {
  for (const JobGpuMemory& m : r.gpu_memory) {
    if (m.index == index) return true;
  }
  for (const std::string& item : SplitGpuList(r.spec.gpus)) {
    if (item == std::to_string(index) || (!uuid.empty() && item == uuid)) return true;
  }
  return false;
}

}  // namespace

std::vector<std::string> JobSupervisor::GpuFaulted(uint32_t index, const std::string& uuid, const std::string& reason) {
  std::vector<std::string> stopped;
  loop_.RunOnOwner(
      [&] {
        std::vector<std::string> on_it;
        table_.ForEach([&](const JobEntry& entry) {
          const JobRecord& r = entry.record;
          if (IsActive(r.state) && !r.stop_requested && UsesGpu(r, index, uuid)) on_it.push_back(r.spec.name);
        });
        for (const std::string& name : on_it) {
          JobEntry* entry = table_.Find(name);
          if (!entry) continue;
          const bool relaunch = entry->record.spec.on_gpu_fault == OnFail::kRecover;
          Result<JobRecord> begun = commands_.BeginAgentStop(
              name, kGpuFaultStopGrace, {"GPU " + std::to_string(index) + " faulted: " + reason, relaunch, "gpu_fault"});
          if (begun.ok()) stopped.push_back(name);
        }
      },
      kCommandWait);
  return stopped;
}

std::vector<GuardedJob> JobSupervisor::RunningJobs() { return guard_.RunningJobs(); }

void JobSupervisor::MarkKilledByGuard(const std::string& run_id, const std::string& reason) {
  guard_.MarkKilledByGuard(run_id, reason);
}

void JobSupervisor::MarkFailed(const std::string& run_id, const std::string& reason) {
  guard_.MarkFailed(run_id, reason);
}

}  // namespace gpuctl::train
