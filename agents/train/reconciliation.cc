#include "agents/train/reconciliation.h"

#include <spdlog/spdlog.h>

#include "agents/sys/files.h"
#include "common/event_kinds.h"

namespace gpuctl::train {
namespace {

constexpr std::string_view kSessionPrefix = "gpuctl-";

}  // namespace

Reconciliation::Reconciliation(sys::Tmux& tmux, JobLauncher& launcher, RunMonitor& monitor,
                               UnreadableRuns& unreadable, GuardView& guard)
    : tmux_(tmux), launcher_(launcher), monitor_(monitor), unreadable_(unreadable), guard_(guard) {}

void Reconciliation::OnStart(JobTable& table) {
  for (JobRecord& record : table.store().LoadAll()) table.Put(std::move(record));
  AdoptOrphans(table);
  table.ForEach([&](JobEntry& entry) { unreadable_.FindRun(entry); });
  table.ForEach([&](JobEntry& entry) {
    JobRecord& r = entry.record;
    // What the log gained while no agent read it, the job's last lines
    // among it when it ended meanwhile: the ticks read it from where the
    // record left off (a stale log_bytes would say nothing is behind).
    if (r.state != JobState::kUnreadable && !r.log_path.empty()) {
      if (Result<uint64_t> size = sys::RegularFileSize(r.log_path); size.ok() && *size != r.log_bytes) {
        r.log_bytes = *size;
        monitor_.NoteBacklog(r);
      }
    }
    // Saved, then the agent stopped: did the launch happen?
    if (r.state == JobState::kStarting && r.pid == 0) monitor_.AdoptLaunched(entry);
    if (IsActive(r.state)) {
      monitor_.Refresh(entry, 0);
      spdlog::info("job '{}' (run {}): {} after agent start (pid {})", r.spec.name, r.run_id, JobStateName(r.state),
                   r.pid);
    }
    table.Publish(entry);
  });
  guard_.Update(table);
}

void Reconciliation::AdoptOrphans(JobTable& table) {
  Result<std::vector<std::string>> sessions = tmux_.ListSessions();
  if (!sessions.ok()) {
    spdlog::warn("cannot list tmux sessions to find orphaned jobs: {}", sessions.status().message());
    return;
  }
  for (const std::string& session : *sessions) {
    if (!session.starts_with(kSessionPrefix)) continue;
    std::string name = session.substr(kSessionPrefix.size());
    if (!ValidateJobName(name).ok() || TmuxSessionName(name) != session) continue;
    std::string run = tmux_.SessionEnvironment(session, "GPUCTL_RUN_ID").value_or("");
    if (const JobEntry* found = table.Find(name)) {
      const JobRecord& claimed = found->record;
      // Its own run's session; or a session of an agent from before run ids,
      // claimed by its record.
      if (claimed.run_id == run || (run.empty() && IsActive(claimed.state))) continue;
      if (IsActive(claimed.state) || claimed.state == JobState::kUnreadable) {
        spdlog::warn("tmux session {} (run '{}') runs beside job '{}' (run {}, {}); left alone", session, run, name,
                     claimed.run_id, JobStateName(claimed.state));
        continue;
      }
    }
    JobRecord orphan;
    orphan.spec.name = name;
    orphan.run_id = run.empty() ? "unknown" : run;
    orphan.state = JobState::kOrphaned;
    orphan.state_reason = "found running at agent start with no record claiming it (tmux session " + session + ")";
    orphan.tmux_session = session;
    orphan.created_unix_ms = orphan.started_unix_ms = table.NowMs();
    orphan.log_path = table.store().LogPath(name);
    orphan.exit_path = table.store().ExitPath(name);
    if (Result<Pane> pane = launcher_.FindPane(session); pane.ok()) {
      orphan.pid = orphan.pgid = pane->pid;
      orphan.pid_start_time = pane->start_time;
    }
    spdlog::warn("job '{}': {}", name, orphan.state_reason);
    if (Status s = table.store().Prepare(name); !s.ok()) spdlog::error("job '{}': {}", name, s.message());
    JobEntry& entry = table.Put(std::move(orphan));
    (void)table.Save(entry);
    table.PublishEvent(event_kind::kJobOrphaned, entry.record, entry.record.state_reason,
                       {{"pid", entry.record.pid}, {"tmux_session", sys::TmuxNativeSessionName(session)}});
  }
}

}  // namespace gpuctl::train
