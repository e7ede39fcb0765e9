// The Agent service's job RPCs: translate, call the JobSupervisor, translate
// back. Starts, stops and removals wait on the supervisor's owner thread, so
// they run on the job-call pool; reads answer from snapshots at once.
#include <algorithm>
#include <cstdio>
#include <iterator>

#include "agents/sys/boot_id.h"
#include "agents/train/checkpoint_relaunch.h"
#include "agents/train/oom_relaunch.h"
#include "daemon/service/agent_service.h"
#include "daemon/service/job_convert.h"
#include "daemon/service/log_stream.h"
#include "daemon/service/on_pool.h"
#include "daemon/service/proto_text.h"
#include "daemon/service/status_convert.h"

namespace gpuctl::daemon {
namespace {

constexpr std::chrono::milliseconds kDefaultStopGrace{10'000};
// A ListJobs page stops growing past this: a quarter of gRPC's default
// message limit, and far above one job (its events are bounded by bytes).
constexpr size_t kListPageBytes = 1 << 20;

// Jobs are listed oldest first, and a page token is the key of the last job
// of its page: "CREATED_MS/NAME", zero-padded so keys sort as jobs do.
std::string ListPageKey(const train::JobRecord& job) {
  char created[24];
  std::snprintf(created, sizeof created, "%020lld", static_cast<long long>(job.created_unix_ms));
  return std::string(created) + "/" + job.spec.name;
}

void ToProto(const build::BuildStats& in, v1::BuildStatus& out) {
  out.set_budget_bytes(in.budget_bytes);
  out.set_headroom_bytes(in.headroom_bytes);
  out.set_running(in.running);
  out.set_paused(in.paused);
  out.set_pauses(in.pauses);
  out.set_paused_seconds(in.paused_seconds);
  out.set_compiles_done(in.compiles_done);
  out.set_compiles_stopped(in.compiles_stopped);
  out.set_in_use_bytes(in.in_use_bytes);
  out.set_peak_bytes(in.peak_bytes);
  out.set_oom_kills(in.oom_kills);
  out.set_failure(in.failure);
}

}  // namespace

void AgentService::FillJob(const train::JobRecord& job, v1::Job& out) const {
  ToProto(job, out);
  out.set_tmux_socket(jobs_.tmux_socket());
  // A failed run the agent is about to relaunch has not ended for good
  // (`gpuctl train wait` waits on through it).
  out.set_relaunch_pending(train::OomRelaunch::Pending(job) || train::CheckpointRelaunch::Pending(job));
  if (job.spec.kind != train::kJobKindBuild || !builds_.status) return;
  if (std::optional<build::BuildStats> stats = builds_.status(job.run_id)) ToProto(*stats, *out.mutable_build());
}

v1::ListJobsResponse AgentService::ListJobsSnapshot() const {
  v1::ListJobsResponse response;
  for (const train::JobRecord& job : jobs_.ListJobs()) FillJob(job, *response.add_jobs());
  return response;
}

void AgentService::FinishJob(grpc::ServerUnaryReactor* reactor, const Result<train::JobRecord>& job,
                             v1::Job* response) const {
  if (!job.ok()) {
    reactor->Finish(ToGrpcStatus(job.status()));
    return;
  }
  FillJob(*job, *response);
  reactor->Finish(grpc::Status::OK);
}

grpc::ServerUnaryReactor* AgentService::StartJob(grpc::CallbackServerContext* context,
                                                 const v1::StartJobRequest* request, v1::Job* response) {
  Result<train::JobSpec> spec = FromProto(request->spec());
  if (!spec.ok()) {
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    FinishJob(reactor, Result<train::JobRecord>(spec.status()), response);
    return reactor;
  }
  auto start = [this, response, spec = std::move(*spec)](grpc::ServerUnaryReactor* reactor) mutable {
    // A build is prepared from the host's facts (a GPU reading among them):
    // on the pool, never on a gRPC thread.
    if (spec.kind == train::kJobKindBuild) {
      Status prepared = builds_.prepare ? builds_.prepare(spec) : FailedPrecondition("this agent does not run builds");
      if (!prepared.ok()) return FinishJob(reactor, Result<train::JobRecord>(prepared), response);
    }
    FinishJob(reactor, jobs_.StartJob(spec), response);
  };
  return OnPool(context, job_calls_, std::move(start));
}

grpc::ServerUnaryReactor* AgentService::GetJob(grpc::CallbackServerContext* context,
                                               const v1::GetJobRequest* request, v1::Job* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  FinishJob(reactor, jobs_.GetJob(request->name()), response);
  return reactor;
}

grpc::ServerUnaryReactor* AgentService::ListJobs(grpc::CallbackServerContext* context,
                                                 const v1::ListJobsRequest* request,
                                                 v1::ListJobsResponse* response) {
  std::vector<train::JobRecord> jobs = jobs_.ListJobs();
  std::sort(jobs.begin(), jobs.end(), [](const train::JobRecord& a, const train::JobRecord& b) {
    return ListPageKey(a) < ListPageKey(b);
  });
  // Jobs after the token, until the page is full: a page never nears the
  // message limit, however many jobs there are or how many events each has.
  auto next = std::upper_bound(jobs.begin(), jobs.end(), request->page_token(),
                               [](const std::string& token, const train::JobRecord& job) {
                                 return token < ListPageKey(job);
                               });
  if (request->page_token().empty()) next = jobs.begin();
  size_t bytes = 0;
  for (; next != jobs.end(); ++next) {
    if (response->jobs_size() > 0 && bytes >= kListPageBytes) {
      response->set_next_page_token(ListPageKey(*std::prev(next)));
      break;
    }
    v1::Job* job = response->add_jobs();
    FillJob(*next, *job);
    bytes += job->ByteSizeLong();
  }
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

grpc::ServerUnaryReactor* AgentService::StopJob(grpc::CallbackServerContext* context,
                                                const v1::StopJobRequest* request, v1::Job* response) {
  std::string name = request->name();
  auto grace = request->grace_ms() == 0 ? kDefaultStopGrace : std::chrono::milliseconds(request->grace_ms());
  return OnPool(context, job_calls_, [this, response, name, grace](grpc::ServerUnaryReactor* reactor) {
    FinishJob(reactor, jobs_.StopJob(name, grace), response);
  });
}

grpc::ServerUnaryReactor* AgentService::RemoveJob(grpc::CallbackServerContext* context,
                                                  const v1::RemoveJobRequest* request,
                                                  v1::RemoveJobResponse* response) {
  std::string name = request->name();
  std::string only_run = request->run_id();
  return OnPool(context, job_calls_, [this, response, name, only_run](grpc::ServerUnaryReactor* reactor) {
    Result<train::JobRecord> removed = jobs_.RemoveJob(name, only_run);
    if (!removed.ok()) {
      reactor->Finish(ToGrpcStatus(removed.status()));
      return;
    }
    response->set_name(removed->spec.name);
    response->set_run_id(removed->state == train::JobState::kUnreadable ? "" : removed->run_id);
    reactor->Finish(grpc::Status::OK);
  });
}

grpc::ServerUnaryReactor* AgentService::DumpJob(grpc::CallbackServerContext* context, const v1::DumpJobRequest* request,
                                                v1::DumpJobResponse* response) {
  std::string name = request->name();
  return OnPool(context, job_calls_, [this, response, name](grpc::ServerUnaryReactor* reactor) {
    Result<train::StackDump> dump = jobs_.DumpJob(name);
    if (!dump.ok()) {
      reactor->Finish(ToGrpcStatus(dump.status()));
      return;
    }
    if (!dump->error.empty()) {
      reactor->Finish(ToGrpcStatus(Status(ErrorCode::kIo, "cannot write the dump in " + dump->dir + ": " + dump->error)));
      return;
    }
    response->set_dump_dir(dump->dir);
    for (const std::string& file : dump->files) response->add_files(file);
    std::string summary;
    for (const train::ProcessDump& p : dump->processes) {
      summary += "pid " + std::to_string(p.pid) + (p.rank ? " rank " + std::to_string(*p.rank) : std::string()) +
                 " (" + std::string(1, p.state) + "): " + p.method +
                 (p.top_frame.empty() ? std::string() : ", at " + p.top_frame) + "\n";
    }
    response->set_summary(summary);
    MakeStringsUtf8(*response);
    reactor->Finish(grpc::Status::OK);
  });
}

grpc::ServerWriteReactor<v1::LogChunk>* AgentService::StreamLogs(grpc::CallbackServerContext* /*context*/,
                                                                  const v1::StreamLogsRequest* request) {
  train::LogFollowOptions options;
  options.job = request->name();
  options.from_offset = request->from_offset();
  if (request->has_tail_lines()) options.tail_lines = request->tail_lines();
  options.follow = request->follow();
  options.attempt = request->attempt();
  options.across_attempts = request->across_attempts();
  // A client on this host (the same kernel) reads the log itself.
  static const std::string boot_id = sys::BootId();
  options.local_ranges = !boot_id.empty() && request->local_boot_id() == boot_id;
  return new LogStreamReactor(jobs_, log_watch_, log_slots_, std::move(options), &streams_);
}

}  // namespace gpuctl::daemon
