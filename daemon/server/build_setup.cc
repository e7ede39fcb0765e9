#include "daemon/server/build_setup.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "agents/guard/guard_config.h"
#include "agents/guard/memory_budget.h"

namespace gpuctl::daemon {

std::optional<uint64_t> DomainRoom(const std::optional<GuardPlan>& guard, const sys::HostFs& fs,
                                   sys::CgroupDriver* cgroups) {
  if (!guard) return std::nullopt;
  Result<guard::DomainReading> reading = guard::MemoryDomainReader(guard->config.domain, fs, cgroups).Read();
  if (!reading.ok()) return std::nullopt;
  return guard::BudgetOf(*reading, guard->config).budget_bytes();
}

build::BuildHostFacts BuildMemoryFacts(const sys::HostFs& fs, const std::optional<GuardPlan>& guard,
                                       sys::CgroupDriver* cgroups) {
  build::BuildHostFacts facts;
  // The guard's own domain and reserve (the host and the default reserve
  // without a guard), through the function the guard's line comes from.
  const guard::GuardConfig config = guard ? guard->config : guard::GuardConfig{};
  Result<guard::DomainReading> reading = guard::MemoryDomainReader(config.domain, fs, cgroups).Read();
  if (reading.ok()) {
    guard::MemoryBudget budget = guard::BudgetOf(*reading, config);
    facts.available_bytes = budget.available_bytes;
    facts.domain_total_bytes = budget.domain_total_bytes;
    facts.reserve_bytes = budget.reserve_bytes;
  }
  if (guard) facts.domain_total_bytes = std::min(facts.domain_total_bytes, guard->domain_total_bytes);
  return facts;
}

build::BuildHostFacts ReadBuildHostFacts(const sys::HostFs& fs, const std::optional<GuardPlan>& guard,
                                         sys::CgroupDriver* cgroups, health::HealthSampler& sampler) {
  build::BuildHostFacts facts = BuildMemoryFacts(fs, guard, cgroups);
  facts.cpus = fs.ReadCpuCount();
  if (Result<health::HealthSnapshot> snapshot = sampler.Sample(); snapshot.ok()) {
    for (const sys::GpuDevice& gpu : snapshot->gpus.devices) {
      if (!gpu.compute_capability.empty()) facts.gpu_capabilities.push_back(gpu.compute_capability);
    }
  }
  return facts;
}

Status BuildsCanBeGoverned(const std::optional<GuardPlan>& guard, const sys::CgroupDriver* job_cgroups) {
  if (job_cgroups != nullptr) return Status::Ok();
  std::string why = !guard ? "it runs with --guard off"
                    : guard->no_job_cgroups_why.empty() ? "this host has no memory cgroup controller it can use"
                                                        : guard->no_job_cgroups_why;
  return FailedPrecondition("this agent cannot govern a build: " + why +
                            ". A build runs in a memory cgroup whose limit is its budget, with the governor "
                            "pausing compiles inside it, and without one it would run unbounded. Run gpuctld as "
                            "root with its guard on (the default), or run the build outside gpuctl");
}

Status PrepareBuildSpec(train::JobSpec& spec, const build::BuildHostFacts& facts) {
  Result<build::PreparedBuild> prepared = build::PrepareBuild(spec.build.mem_budget_bytes, spec.build.cpus,
                                                              spec.build.archs, facts);
  if (!prepared.ok()) return prepared.status();
  spec.mem_limit_bytes = prepared->budget_bytes;
  for (const auto& [key, value] : prepared->env) spec.env.try_emplace(key, value);
  spec.env.try_emplace("GPUCTL_BUILD_BUDGET", std::to_string(prepared->budget_bytes));
  return Status::Ok();
}

std::vector<build::BuildJob> GovernableBuilds(train::JobSupervisor& jobs) {
  std::vector<build::BuildJob> builds;
  for (const train::GuardedJob& job : jobs.RunningJobs()) {
    // A build being stopped is let go: the watch resumes what it paused, so
    // every compile takes the stop's SIGTERM.
    if (job.kind != train::kJobKindBuild || job.cgroup.empty() || !job.mem_limit_bytes || job.stop_requested) continue;
    builds.push_back({job.name, job.run_id, job.cgroup, job.cwd, *job.mem_limit_bytes});
  }
  return builds;
}

build::BuildOutcome BuildOutcomeOf(train::JobSupervisor& jobs, const build::BuildJob& build) {
  Result<train::JobRecord> job = jobs.GetJob(build.name);
  if (!job.ok() || job->run_id != build.run_id) return build::BuildOutcome::kFailed;  // removed, or run again
  // Being stopped, or already ended by the stop (its compiles die at once).
  if (job->stop_requested) return build::BuildOutcome::kStopping;
  if (train::IsActive(job->state)) return build::BuildOutcome::kRunning;
  return job->state == train::JobState::kSucceeded ? build::BuildOutcome::kSucceeded : build::BuildOutcome::kFailed;
}

std::unique_ptr<build::BuildWatch> StartBuildWatch(const std::string& state_dir, train::JobSupervisor& jobs,
                                                   events::EventLog& events, const std::optional<GuardPlan>& guard,
                                                   sys::CgroupDriver* cgroups, sys::ProcessControl& processes,
                                                   const sys::HostFs& fs, const sys::Clock& clock) {
  if (cgroups == nullptr) return nullptr;
  build::BuildWatchHooks hooks{
      .builds = [&jobs] { return GovernableBuilds(jobs); },
      .fail =
          [&jobs, cgroups](const build::BuildJob& build, const std::string& why) {
            jobs.MarkFailed(build.run_id, why);
            if (Status s = cgroups->KillAll(build.cgroup); !s.ok()) spdlog::warn("build '{}': {}", build.name, s.message());
          },
      .publish =
          [&events](const build::BuildJob& build, const std::string& kind, const std::string& message,
                    nlohmann::json fields) {
            fields["run_id"] = build.run_id;
            events.Publish({.kind = kind, .job = build.name, .message = message, .fields = std::move(fields)});
          },
      .domain_room = [&guard, &fs, cgroups]() -> std::optional<uint64_t> { return DomainRoom(guard, fs, cgroups); },
      .outcome = [&jobs](const build::BuildJob& build) { return BuildOutcomeOf(jobs, build); },
  };
  build::BuildWatchOptions options;
  options.history_path = state_dir + "/build-peaks.json";
  options.cores = fs.ReadCpuCount();
  auto watch = std::make_unique<build::BuildWatch>(options, std::move(hooks), *cgroups, processes, fs, clock);
  watch->Start();
  return watch;
}

}  // namespace gpuctl::daemon
