// The build governor's wiring: the host facts a build is prepared from, a
// build spec's budget and environment, and the running builds as the
// BuildWatch sees them.
#pragma once

#include <optional>
#include <vector>

#include "agents/build/build_spec.h"
#include "agents/build/build_watch.h"
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

// Sets a build spec's memory limit to its budget and adds the build
// environment under the user's own --env (the user's values win).
Status PrepareBuildSpec(train::JobSpec& spec, const build::BuildHostFacts& facts);

// Running build jobs that have a cgroup and a limit and are not being
// stopped: what can be governed.
std::vector<build::BuildJob> GovernableBuilds(train::JobSupervisor& jobs);

}  // namespace gpuctl::daemon
