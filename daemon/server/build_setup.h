// The build governor's wiring: the host facts a build is prepared from, a
// build spec's budget and environment, and the running builds as the
// BuildWatch sees them.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agents/build/build_spec.h"
#include "agents/build/build_watch.h"
#include "agents/events/event_log.h"
#include "agents/health/health_sampler.h"
#include "agents/sys/host_fs.h"
#include "agents/train/job_supervisor.h"
#include "daemon/server/guard_setup.h"

namespace gpuctl::daemon {

// CPUs; the memory available in the guard's domain (a cgroup's, when the
// guard watches one) and the guard's reserve, from guard::BudgetOf, as the
// guard itself reads them (the host and the default reserve without a
// guard); and the GPUs' compute capabilities.
// What may still be taken in the guard's domain before its kill line, now
// (guard::BudgetOf); nullopt without a guard or when it cannot be read.
std::optional<uint64_t> DomainRoom(const std::optional<GuardPlan>& guard, const sys::HostFs& fs,
                                   sys::CgroupDriver* cgroups);

// The memory part of ReadBuildHostFacts alone (cpus and GPUs left empty).
// Its reserve is also the one provisioning's ext builds leave free
// (ProvisionConfigFor, agent_startup.h): one reserve for every build.
build::BuildHostFacts BuildMemoryFacts(const sys::HostFs& fs, const std::optional<GuardPlan>& guard,
                                       sys::CgroupDriver* cgroups);
build::BuildHostFacts ReadBuildHostFacts(const sys::HostFs& fs, const std::optional<GuardPlan>& guard,
                                         sys::CgroupDriver* cgroups, health::HealthSampler& sampler);

// A build is a memory cgroup whose limit is its budget, governed live: an
// agent whose jobs get no cgroup (--guard off, or the job cgroup could not
// be made) refuses it (kFailedPrecondition, saying why) instead of running
// it unbounded and ungoverned while reporting a budget it does not keep.
Status BuildsCanBeGoverned(const std::optional<GuardPlan>& guard, const sys::CgroupDriver* job_cgroups);

// Sets a build spec's memory limit to its budget and adds the build
// environment under the user's own --env (the user's values win).
Status PrepareBuildSpec(train::JobSpec& spec, const build::BuildHostFacts& facts);

// Running build jobs that have a cgroup and a limit and are not being
// stopped: what can be governed.
std::vector<build::BuildJob> GovernableBuilds(train::JobSupervisor& jobs);

// How a build the governor no longer sees stands, from its job's record.
build::BuildOutcome BuildOutcomeOf(train::JobSupervisor& jobs, const build::BuildJob& build);

// The live build governor over the running build jobs, started: it fails a
// build that cannot fit (marking the run failed and killing its cgroup),
// publishes its events, and takes the room left in the guard's domain
// (DomainRoom). Its peak history is kept in STATE_DIR/build-peaks.json. Null
// without a cgroup driver (jobs without cgroups): builds are then refused
// (BuildsCanBeGoverned).
// Everything passed must outlive the watch.
std::unique_ptr<build::BuildWatch> StartBuildWatch(const std::string& state_dir, train::JobSupervisor& jobs,
                                                   events::EventLog& events, const std::optional<GuardPlan>& guard,
                                                   sys::CgroupDriver* cgroups, sys::ProcessControl& processes,
                                                   const sys::HostFs& fs, const sys::Clock& clock);

}  // namespace gpuctl::daemon
