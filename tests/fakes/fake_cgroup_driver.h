// An in-memory CgroupDriver for the code above the seam (the guard, job
// launch), after Ray's fake_cgroup_driver.h: a map of cgroups with settable
// figures, the same error codes as the real drivers (it runs their contract
// suite, tests/fakes/cgroup_driver_contract.h), and failures a test can
// switch on per operation. Thread-safe, since the guard loop reads from its
// own thread while a test changes figures.
#pragma once

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "agents/sys/cgroup_driver.h"
#include "agents/sys/cgroup_io.h"

namespace gpuctl::testing {

class FakeCgroupDriver final : public sys::CgroupDriver {
 public:
  enum class Op {
    kCreate, kRemove, kAddProcess, kSetMemoryMax, kSetMemoryHigh, kMemoryCurrent, kMemoryLimit,
    kReclaimableFile, kMemoryPressure, kProcesses, kOomKillCount, kKillAll,
    kCreateSubgroup, kChildren, kSetFrozen, kFrozen,
  };

  struct Cgroup {
    // Every member has an initializer so tests may name only what they set.
    std::optional<uint64_t> max{};   // nullopt: no limit
    std::optional<uint64_t> high{};  // v2 only
    uint64_t current = 0;
    uint64_t reclaimable_file = 0;
    uint64_t oom_kills = 0;
    std::vector<int64_t> procs{};
    std::optional<sys::Pressure> pressure{};  // nullopt: MemoryPressure fails
    bool frozen = false;  // v2 cgroup.freeze, and what cgroup.events reports at once
  };

  // The root cgroup "/" exists from the start.
  explicit FakeCgroupDriver(sys::CgroupVersion version = sys::CgroupVersion::kV2) : version_(version) {
    cgroups_["/"] = Cgroup{};
  }

  // Every later call of `op` returns `status` until ClearFailures.
  void FailOn(Op op, Status status) {
    std::lock_guard lock(mutex_);
    failures_[op] = std::move(status);
  }
  void ClearFailures() {
    std::lock_guard lock(mutex_);
    failures_.clear();
  }
  // Creates or replaces a cgroup (parents are not required here).
  void Put(const std::string& path, Cgroup cgroup) {
    std::lock_guard lock(mutex_);
    cgroups_[path] = std::move(cgroup);
  }
  std::optional<Cgroup> Get(const std::string& path) const {
    std::lock_guard lock(mutex_);
    auto it = cgroups_.find(path);
    if (it == cgroups_.end()) return std::nullopt;
    return it->second;
  }
  // Process `pid` exited: it leaves whatever cgroup it was in.
  void Forget(int64_t pid) {
    std::lock_guard lock(mutex_);
    for (auto& [unused, cgroup] : cgroups_) std::erase(cgroup.procs, pid);
  }
  // The paths KillAll was called on, in order.
  std::vector<std::string> kills() const {
    std::lock_guard lock(mutex_);
    return kills_;
  }

  sys::CgroupVersion version() const override { return version_; }
  Result<std::string> Directory(const std::string& path) const override {
    return sys::JoinCgroupPath("/fake-cgroup", path);
  }

  Status CreateCgroup(const std::string& path) override {
    std::lock_guard lock(mutex_);
    if (Status s = Check(Op::kCreate, path); !s.ok()) return s;
    Result<std::string> parent = sys::ParentCgroupPath(path);
    if (!parent.ok()) return parent.status();
    if (!cgroups_.contains(*parent)) return NotFound("parent cgroup " + *parent + " does not exist");
    if (cgroups_.contains(path)) return Status(ErrorCode::kAlreadyExists, "cgroup " + path + " exists");
    cgroups_[path] = Cgroup{};
    return Status::Ok();
  }
  Status RemoveCgroup(const std::string& path) override {
    std::lock_guard lock(mutex_);
    if (Status s = Check(Op::kRemove, path); !s.ok()) return s;
    auto it = cgroups_.find(path);
    if (it == cgroups_.end()) return NotFound("no cgroup " + path);
    // The root is the mount itself: rmdir fails with EBUSY.
    if (path == "/") return FailedPrecondition("the root cgroup cannot be removed");
    // Children without processes go with it; one with processes keeps it.
    std::vector<std::string> below = Below(path);
    for (const std::string& child : below) {
      if (!cgroups_[child].procs.empty()) return FailedPrecondition("cgroup " + child + " has processes");
    }
    if (!it->second.procs.empty()) return FailedPrecondition("cgroup " + path + " has processes");
    for (const std::string& child : below) cgroups_.erase(child);
    cgroups_.erase(path);
    return Status::Ok();
  }
  Status AddProcess(const std::string& path, int64_t pid) override {
    std::lock_guard lock(mutex_);
    if (pid <= 0) return InvalidArgument("cannot add pid " + std::to_string(pid));
    Result<Cgroup*> cgroup = Find(Op::kAddProcess, path);
    if (!cgroup.ok()) return cgroup.status();
    for (auto& [unused, other] : cgroups_) std::erase(other.procs, pid);  // a process is in one cgroup
    (*cgroup)->procs.push_back(pid);
    return Status::Ok();
  }
  Status SetMemoryMax(const std::string& path, std::optional<uint64_t> bytes) override {
    std::lock_guard lock(mutex_);
    Result<Cgroup*> cgroup = Find(Op::kSetMemoryMax, path);
    if (!cgroup.ok()) return cgroup.status();
    (*cgroup)->max = bytes;
    return Status::Ok();
  }
  Status SetMemoryHigh(const std::string& path, std::optional<uint64_t> bytes) override {
    std::lock_guard lock(mutex_);
    // v1: always, whatever the path, as the real driver (cgroup_driver.h).
    if (version_ == sys::CgroupVersion::kV1) {
      if (auto it = failures_.find(Op::kSetMemoryHigh); it != failures_.end()) return it->second;
      return FailedPrecondition("cgroup v1 has no memory.high");
    }
    Result<Cgroup*> cgroup = Find(Op::kSetMemoryHigh, path);
    if (!cgroup.ok()) return cgroup.status();
    (*cgroup)->high = bytes;
    return Status::Ok();
  }
  Result<uint64_t> MemoryCurrent(const std::string& path) override {
    std::lock_guard lock(mutex_);
    Result<Cgroup*> cgroup = Find(Op::kMemoryCurrent, path);
    if (!cgroup.ok()) return cgroup.status();
    return (*cgroup)->current;
  }
  Result<std::optional<uint64_t>> MemoryLimit(const std::string& path) override {
    std::lock_guard lock(mutex_);
    Result<Cgroup*> cgroup = Find(Op::kMemoryLimit, path);
    if (!cgroup.ok()) return cgroup.status();
    return (*cgroup)->max;
  }
  Result<uint64_t> ReclaimableFile(const std::string& path) override {
    std::lock_guard lock(mutex_);
    Result<Cgroup*> cgroup = Find(Op::kReclaimableFile, path);
    if (!cgroup.ok()) return cgroup.status();
    return (*cgroup)->reclaimable_file;
  }
  Result<sys::Pressure> MemoryPressure(const std::string& path) override {
    std::lock_guard lock(mutex_);
    // v1 has no per-cgroup pressure at all: kFailedPrecondition for any path,
    // as the real driver, never kNotFound (which reads as "the cgroup is gone").
    if (version_ == sys::CgroupVersion::kV1) {
      if (auto it = failures_.find(Op::kMemoryPressure); it != failures_.end()) return it->second;
      return FailedPrecondition("cgroup v1 has no per-cgroup memory pressure");
    }
    Result<Cgroup*> cgroup = Find(Op::kMemoryPressure, path);
    if (!cgroup.ok()) return cgroup.status();
    if (!(*cgroup)->pressure) {
      return FailedPrecondition("no memory pressure for cgroup " + path);
    }
    return *(*cgroup)->pressure;
  }
  Result<std::vector<int64_t>> Processes(const std::string& path) override {
    std::lock_guard lock(mutex_);
    Result<Cgroup*> cgroup = Find(Op::kProcesses, path);
    if (!cgroup.ok()) return cgroup.status();
    std::vector<int64_t> procs = (*cgroup)->procs;
    if (path == "/") return procs;  // the root's own alone, as the real drivers
    for (const std::string& child : Below(path)) {
      const std::vector<int64_t>& more = cgroups_[child].procs;
      procs.insert(procs.end(), more.begin(), more.end());
    }
    return procs;
  }
  Status CreateSubgroup(const std::string& path) override {
    {
      std::lock_guard lock(mutex_);
      if (version_ == sys::CgroupVersion::kV1) {
        if (auto it = failures_.find(Op::kCreateSubgroup); it != failures_.end()) return it->second;
        return FailedPrecondition("cgroup v1: no pause groups");
      }
      if (Status s = Check(Op::kCreateSubgroup, path); !s.ok()) return s;
    }
    return CreateCgroup(path);
  }
  Result<std::vector<std::string>> Children(const std::string& path) override {
    std::lock_guard lock(mutex_);
    Result<Cgroup*> cgroup = Find(Op::kChildren, path);
    if (!cgroup.ok()) return cgroup.status();
    std::vector<std::string> children;
    for (const std::string& below : Below(path)) {
      if (sys::ParentCgroupPath(below).value_or("") == path) children.push_back(below);
    }
    return children;
  }
  Status SetFrozen(const std::string& path, bool frozen) override {
    std::lock_guard lock(mutex_);
    if (version_ == sys::CgroupVersion::kV1) {
      if (auto it = failures_.find(Op::kSetFrozen); it != failures_.end()) return it->second;
      return FailedPrecondition("cgroup v1: no cgroup.freeze");
    }
    Result<Cgroup*> cgroup = Find(Op::kSetFrozen, path);
    if (!cgroup.ok()) return cgroup.status();
    (*cgroup)->frozen = frozen;
    return Status::Ok();
  }
  Result<bool> Frozen(const std::string& path) override {
    std::lock_guard lock(mutex_);
    if (version_ == sys::CgroupVersion::kV1) {
      if (auto it = failures_.find(Op::kFrozen); it != failures_.end()) return it->second;
      return FailedPrecondition("cgroup v1: no cgroup.freeze");
    }
    Result<Cgroup*> cgroup = Find(Op::kFrozen, path);
    if (!cgroup.ok()) return cgroup.status();
    return (*cgroup)->frozen;
  }
  Result<uint64_t> OomKillCount(const std::string& path) override {
    std::lock_guard lock(mutex_);
    Result<Cgroup*> cgroup = Find(Op::kOomKillCount, path);
    if (!cgroup.ok()) return cgroup.status();
    return (*cgroup)->oom_kills;
  }
  // Empties the cgroup at once: every process dies; memory is freed.
  Status KillAll(const std::string& path) override {
    std::lock_guard lock(mutex_);
    Result<Cgroup*> cgroup = Find(Op::kKillAll, path);
    if (!cgroup.ok()) return cgroup.status();
    (*cgroup)->procs.clear();
    (*cgroup)->current = 0;
    if (path != "/") {
      for (const std::string& child : Below(path)) cgroups_[child].procs.clear();
    }
    kills_.push_back(path);
    return Status::Ok();
  }

 private:
  // The set failure for `op`, else a path check as the real drivers make.
  Status Check(Op op, const std::string& path) const {
    if (auto it = failures_.find(op); it != failures_.end()) return it->second;
    Result<std::string> dir = sys::JoinCgroupPath("/fake-cgroup", path);
    return dir.ok() ? Status::Ok() : dir.status();
  }
  // Every cgroup under `path` (not itself), parents before their children.
  std::vector<std::string> Below(const std::string& path) const {
    const std::string prefix = path == "/" ? "/" : path + "/";
    std::vector<std::string> below;
    for (const auto& [other, unused] : cgroups_) {
      if (other != path && other.starts_with(prefix)) below.push_back(other);
    }
    return below;
  }
  Result<Cgroup*> Find(Op op, const std::string& path) {
    if (Status s = Check(op, path); !s.ok()) return s;
    auto it = cgroups_.find(path);
    if (it == cgroups_.end()) return NotFound("no cgroup " + path);
    return &it->second;
  }

  const sys::CgroupVersion version_;
  mutable std::mutex mutex_;
  std::map<std::string, Cgroup> cgroups_;
  std::map<Op, Status> failures_;
  std::vector<std::string> kills_;
};

}  // namespace gpuctl::testing
