#include "agents/train/container_build_gate.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "agents/sys/confined_root.h"
#include "agents/sys/files.h"
#include "agents/train/pid_file.h"
#include "common/units.h"

namespace gpuctl::train {

std::optional<std::string> ContainerCgroupOf(std::string_view path) {
  // Component by component: "lxc" and the one after it, or "lxc.payload.X".
  size_t at = 0;
  while (at < path.size()) {
    while (at < path.size() && path[at] == '/') ++at;
    size_t end = std::min(path.find('/', at), path.size());
    std::string_view part = path.substr(at, end - at);
    if (part.starts_with("lxc.payload.") && part.size() > std::string_view("lxc.payload.").size()) {
      return std::string(path.substr(0, end));
    }
    if (part == "lxc" && end < path.size()) {
      size_t next = std::min(path.find('/', end + 1), path.size());
      if (next > end + 1) return std::string(path.substr(0, next));
    }
    at = end;
  }
  return std::nullopt;
}

namespace {

constexpr uint64_t kSmallestBuildBudget = 256 * kMiB;

// The limit the build's cgroup gets: its own, capped by what the container's
// limit leaves beside what the container already uses.
Result<uint64_t> CappedLimit(sys::CgroupDriver& cgroups, const std::string& container, std::optional<uint64_t> own) {
  std::optional<uint64_t> room;
  Result<std::optional<uint64_t>> limit = cgroups.MemoryLimit(container);
  if (limit.ok() && *limit) {
    Result<uint64_t> used = cgroups.MemoryCurrent(container);
    room = used.ok() && *used < **limit ? **limit - *used : 0;
  }
  std::optional<uint64_t> chosen = own;
  if (room && (!chosen || *room < *chosen)) chosen = room;
  if (!chosen) return FailedPrecondition("the build has no memory budget");
  if (*chosen < kSmallestBuildBudget) {
    return FailedPrecondition("container cgroup " + container + " has " + FormatBytes(*chosen) +
                              " left under its memory limit, under the " + FormatBytes(kSmallestBuildBudget) +
                              " a governed build needs: free memory in the container or raise its limit "
                              "(pct set VMID --memory MiB)");
  }
  return *chosen;
}

Status PlaceBuild(JobRecord& r, int64_t host_pid, sys::ProcessControl& processes, sys::CgroupDriver& cgroups) {
  std::optional<std::string> seen = processes.MemoryCgroup(host_pid);
  if (!seen) return FailedPrecondition("cannot read the memory cgroup of pid " + std::to_string(host_pid));
  std::optional<std::string> container = ContainerCgroupOf(*seen);
  if (!container) {
    return FailedPrecondition("its process is in memory cgroup " + *seen + ", which is no LXC container's");
  }
  Result<uint64_t> limit = CappedLimit(cgroups, *container, r.spec.mem_limit_bytes);
  if (!limit.ok()) return limit.status();
  const std::string cgroup = *container + "/gpuctl-" + r.spec.name + "@" + r.run_id;
  if (Status s = cgroups.CreateCgroup(cgroup); !s.ok() && s.code() != ErrorCode::kAlreadyExists) {
    return s.Wrap("creating " + cgroup);
  }
  // A cgroup the build never entered is not left behind.
  Status s = cgroups.SetMemoryMax(cgroup, *limit);
  if (!s.ok()) s = s.Wrap("limiting " + cgroup);
  if (s.ok()) {
    s = cgroups.AddProcess(cgroup, host_pid);
    if (!s.ok()) s = s.Wrap("moving the build into " + cgroup);
  }
  if (!s.ok()) {
    (void)cgroups.RemoveCgroup(cgroup);
    return s;
  }
  if (r.spec.mem_limit_bytes != *limit) {
    spdlog::info("build '{}': budget {} (the room under container cgroup {}'s limit), not {}", r.spec.name,
                 FormatBytes(*limit), *container, r.spec.mem_limit_bytes ? FormatBytes(*r.spec.mem_limit_bytes) : "none");
  }
  r.spec.mem_limit_bytes = *limit;
  r.cgroup = cgroup;
  return Status::Ok();
}

}  // namespace

bool OpenContainerBuildGate(JobRecord& r, sys::ProcessControl& processes, sys::CgroupDriver& cgroups) {
  if (r.cgroup_gate.empty() || !r.cgroup.empty() || !IsActive(r.state)) return false;
  // Only a number the container wrote, mapped to the host's: never a host pid.
  if (!sys::FindConfinedRoot(r.cgroup_gate)) return false;
  std::optional<int64_t> wrapper = HostPidFromPidFile(processes, r.cgroup_gate + ".pid");
  if (!wrapper) return false;  // not waiting yet (or not visible yet): the next refresh looks again
  Status placed = PlaceBuild(r, *wrapper, processes, cgroups);
  const std::string answer = placed.ok() ? "ok" : "cannot govern the build: " + placed.message();
  if (Status s = sys::WriteFileAtomic(r.cgroup_gate, answer + "\n", 0644); !s.ok()) {
    spdlog::warn("build '{}': cannot open its gate {}: {}", r.spec.name, r.cgroup_gate, s.message());
    return false;  // tried again at the next refresh
  }
  if (placed.ok()) {
    spdlog::info("build '{}' (run {}): governed in cgroup {}", r.spec.name, r.run_id, r.cgroup);
  } else {
    spdlog::warn("build '{}' (run {}): {}", r.spec.name, r.run_id, answer);
  }
  r.cgroup_gate.clear();
  return true;
}

}  // namespace gpuctl::train
