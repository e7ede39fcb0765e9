#include "daemon/server/guard_setup.h"

#include <spdlog/spdlog.h>

#include "agents/sys/cgroup_parsers.h"
#include "agents/sys/cgroup_v1_threshold.h"
#include "agents/sys/files.h"
#include "agents/sys/psi_trigger.h"
#include "common/units.h"

namespace gpuctl::daemon {

Result<GuardPlan> PlanGuard(const DaemonConfig& config, const sys::HostFs& fs, sys::CgroupDriver* cgroups) {
  GuardPlan plan;
  guard::GuardConfig& g = plan.config;
  Result<guard::GuardDomain> domain = guard::ParseGuardDomain(config.guard_domain);
  if (!domain.ok()) return domain.status().Wrap("--guard-domain");
  g.domain = *domain;
  if (!config.guard_reserve.empty()) {
    Result<uint64_t> reserve = ParseByteSize(config.guard_reserve);
    if (!reserve.ok()) return reserve.status().Wrap("--guard-reserve");
    g.reserve_bytes = *reserve;
  }
  g.guard_unmanaged = config.guard_unmanaged;
  g.protected_names = config.guard_protect;

  Result<sys::Meminfo> meminfo = fs.ReadMeminfo();
  if (!meminfo.ok()) return meminfo.status();
  plan.domain_total_bytes = meminfo->mem_total_bytes();
  std::string parent = config.cgroup_parent;
  if (g.domain.kind == guard::GuardDomain::Kind::kCgroup) {
    if (!cgroups) return FailedPrecondition("--guard-domain " + config.guard_domain + ": this host has no memory cgroups");
    // The path under the hierarchy (/lxc/c1, as /proc/PID/cgroup shows it)
    // or the cgroup's directory (/sys/fs/cgroup/memory/lxc/c1).
    Result<std::string> dir = cgroups->Directory(g.domain.cgroup);
    if (Result<std::string> mount = cgroups->Directory("/"); mount.ok() && (!dir.ok() || !sys::PathExists(*dir))) {
      std::string mount_seen = mount->substr(fs.root() == "/" ? 0 : fs.root().size());
      std::string under = sys::StripCgroupMount(g.domain.cgroup, mount_seen);
      if (under != g.domain.cgroup) {
        g.domain.cgroup = under;
        dir = cgroups->Directory(under);
      }
    }
    // A directory: a cgroup's file (memory.limit_in_bytes) exists but is no
    // cgroup, and the guard would read nothing from it.
    if (!dir.ok() || !sys::IsDirectory(*dir)) {
      return InvalidArgument("--guard-domain " + config.guard_domain + ": no such cgroup (" +
                             (dir.ok() ? *dir : dir.status().message()) + ")");
    }
    Result<std::optional<uint64_t>> limit = cgroups->MemoryLimit(g.domain.cgroup);
    if (limit.ok() && limit->has_value()) plan.domain_total_bytes = std::min(plan.domain_total_bytes, **limit);
    if (parent.empty()) parent = g.domain.cgroup + "/gpuctl";
  }
  if (Status s = guard::Validate(g, plan.domain_total_bytes); !s.ok()) return s;
  // Jobs may use all but half the reserve: the guard's kill line (all but the
  // reserve) comes first, and the cgroup limit is only the kernel's backstop.
  plan.default_job_limit_bytes = plan.domain_total_bytes - guard::ReserveBytes(g, plan.domain_total_bytes) / 2;

  bool parent_asked = !parent.empty();
  if (parent.empty()) parent = "/gpuctl";
  Status made = cgroups ? cgroups->CreateCgroup(parent) : FailedPrecondition("no memory cgroup controller");
  if (made.code() == ErrorCode::kAlreadyExists) {
    // Made by an earlier run; it must still take new children (a read-only
    // cgroup mount, as in many containers, does not).
    Result<std::string> dir = cgroups->Directory(parent);
    if (dir.ok() && !sys::IsWritableDir(*dir)) {
      made = Status(ErrorCode::kPermissionDenied, *dir + " cannot be written (a read-only cgroup mount?)");
    }
  }
  if (made.ok() || made.code() == ErrorCode::kAlreadyExists) {
    plan.job_cgroup_parent = parent;
  } else if (parent_asked) {
    return FailedPrecondition("cannot create the job cgroup " + parent + ": " + made.message() +
                              " (run as root, or choose another --cgroup-parent)");
  } else {
    plan.no_job_cgroups_why = "it could not create the job cgroup " + parent + ": " + made.message();
    spdlog::warn("jobs run without memory cgroups ({}): the guard kills them by process group; builds are refused",
                 made.message());
  }
  spdlog::info("memory guard: domain {} ({}), kill below {}, warn below {}, jobs limited to {}",
               config.guard_domain, FormatBytes(plan.domain_total_bytes),
               FormatBytes(guard::ReserveBytes(g, plan.domain_total_bytes)),
               FormatBytes(guard::WarnLineBytes(g, plan.domain_total_bytes)),
               FormatBytes(plan.default_job_limit_bytes));
  return plan;
}

std::vector<guard::GuardedWorkItem> JobsForGuard::Running() {
  std::vector<guard::GuardedWorkItem> out;
  std::map<std::string, std::string> run_ids;
  for (const train::GuardedJob& j : jobs_.RunningJobs()) {
    out.push_back({j.name, j.cgroup, j.pgid});
    run_ids[j.name] = j.run_id;
  }
  std::lock_guard lock(mutex_);
  run_ids_ = std::move(run_ids);
  return out;
}

void JobsForGuard::WillKill(const std::string& name, const std::string& reason) {
  std::string run_id;
  {
    std::lock_guard lock(mutex_);
    auto it = run_ids_.find(name);
    if (it == run_ids_.end()) return;  // not a run the guard was shown
    run_id = it->second;
  }
  jobs_.MarkKilledByGuard(run_id, reason);
}

bool JobsForGuard::Relieve(const std::string& name) {
  if (!relieve_) return false;
  std::string run_id;
  {
    std::lock_guard lock(mutex_);
    auto it = run_ids_.find(name);
    if (it == run_ids_.end()) return false;
    run_id = it->second;
  }
  return relieve_(run_id);
}

std::unique_ptr<sys::MemoryPressureWaiter> MakePressureWaiter(const GuardPlan& plan, const sys::HostFs& fs,
                                                              sys::CgroupDriver* cgroups) {
  const guard::GuardConfig& g = plan.config;
  // Window 2 s: the kernel refuses other windows without CAP_SYS_RESOURCE.
  sys::PsiTriggerSpec some_stall{false, std::chrono::microseconds(100'000), std::chrono::microseconds(2'000'000)};
  if (g.domain.kind == guard::GuardDomain::Kind::kHost) {
    auto trigger = sys::PsiTrigger::Open(fs.Path("proc/pressure/memory"), some_stall);
    if (trigger.ok()) return std::move(trigger).value();
    spdlog::info("memory guard: no PSI trigger ({}); polling", trigger.status().message());
    return nullptr;
  }
  Result<std::string> dir = cgroups->Directory(g.domain.cgroup);
  if (!dir.ok()) return nullptr;
  if (cgroups->version() == sys::CgroupVersion::kV2) {
    auto trigger = sys::PsiTrigger::Open(*dir + "/memory.pressure", some_stall);
    if (trigger.ok()) return std::move(trigger).value();
    return nullptr;
  }
  // v1: a usage threshold at the warn line, until the guard's first reading
  // moves it to its lines with the cache that reading saw (wake_plan.h).
  uint64_t warn = guard::WarnLineBytes(g, plan.domain_total_bytes);
  if (plan.domain_total_bytes <= warn) return nullptr;
  auto threshold = sys::CgroupV1Threshold::Register(*dir, plan.domain_total_bytes - warn);
  if (threshold.ok()) return std::move(threshold).value();
  spdlog::info("memory guard: no v1 threshold ({}); polling", threshold.status().message());
  return nullptr;
}

std::function<void()> WatchdogHeartbeat(const sys::Clock& clock, std::optional<std::chrono::microseconds> interval,
                                        std::function<void()> notify) {
  if (!interval) return [] {};
  return [&clock, every = *interval / 2, notify = std::move(notify), last = clock.SteadyNow()]() mutable {
    if (clock.SteadyNow() - last < every) return;
    last = clock.SteadyNow();
    notify();
  };
}

}  // namespace gpuctl::daemon
