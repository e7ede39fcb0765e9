// The seam to memory cgroups, v1 (memory controller) and v2 alike. Real
// drivers: CgroupV2Driver and CgroupV1Driver, each rooted at an injectable
// mount so tests point them at fixture trees; tests of code above this seam
// use tests/fakes/fake_cgroup_driver.h.
//
// A cgroup is named as /proc/PID/cgroup names it: relative to the mount of
// the hierarchy, starting with '/': "/" is the root cgroup,
// "/gpuctl/job-a" a child. Every method that takes a path fails with
// kInvalidArgument when the path is not absolute or has an empty, "." or ".."
// component, so no name can reach outside the mount.
//
// Errors every method may return besides those listed: kPermissionDenied
// (not root, or a delegated subtree we do not own), kIo (any other errno,
// with the file and strerror in the message).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agents/sys/host_fs.h"
#include "agents/sys/proc_parsers.h"
#include "common/status.h"

namespace gpuctl::sys {

class ProcessControl;

struct CgroupDriverOptions {
  // How long KillAll waits for a cgroup to empty before kUnavailable.
  std::chrono::milliseconds kill_timeout{2000};
};

class CgroupDriver {
 public:
  virtual ~CgroupDriver() = default;

  // kV1 or kV2: which files back the methods below.
  virtual CgroupVersion version() const = 0;
  // The directory of `path` on this host (mount + path), for messages and for
  // the event waiters (CgroupV1Threshold, PsiTrigger) that need real files.
  // Errors: kInvalidArgument (bad path).
  virtual Result<std::string> Directory(const std::string& path) const = 0;

  // mkdir. v2 also enables the memory controller for the new child (writes
  // "+memory" to the parent's cgroup.subtree_control when it is not there),
  // since a child without it has no memory.max.
  // Errors: kAlreadyExists (the cgroup exists: callers that adopt leftovers
  // treat this as success), kNotFound (the parent does not exist),
  // kFailedPrecondition (v2: the parent has processes of its own, so the
  // kernel's no-internal-processes rule refuses the controller).
  virtual Status CreateCgroup(const std::string& path) = 0;

  // rmdir, child cgroups without processes first (a build's pause groups,
  // below, left empty by compiles that ended). Errors: kNotFound (no such
  // cgroup), kFailedPrecondition (it or a child still has processes: KillAll
  // first).
  virtual Status RemoveCgroup(const std::string& path) = 0;

  // A child cgroup that enables no controller of its own (v2 mkdir alone):
  // its processes stay under its parent's memory limit and are charged
  // there. It exists to be frozen (SetFrozen) apart from the rest of the
  // parent, which may keep processes of its own. Errors: kAlreadyExists,
  // kNotFound (no parent), kFailedPrecondition (v1: its freezer is another
  // hierarchy, so callers pause with SIGSTOP there).
  virtual Status CreateSubgroup(const std::string& path) = 0;

  // The child cgroups of `path`, as paths ("/a/b" for child b of "/a"),
  // sorted. Errors: kNotFound.
  virtual Result<std::vector<std::string>> Children(const std::string& path) = 0;

  // v2's freezer: writes cgroup.freeze. Frozen, every process of the cgroup
  // and its children stops at once, a child forked meanwhile included, and
  // no SIGCONT wakes it; SIGKILL still kills it. Errors: kNotFound,
  // kFailedPrecondition (v1, or a v2 kernel before 5.2 without cgroup.freeze).
  virtual Status SetFrozen(const std::string& path, bool frozen) = 0;

  // Whether the cgroup is set frozen (v2 cgroup.freeze reads 1): frozen, or
  // freezing until its last process stops (cgroup.events says when). A
  // cgroup frozen by an agent killed since reads true. Errors: as SetFrozen.
  virtual Result<bool> Frozen(const std::string& path) = 0;

  // Moves process `pid` (all its threads) into the cgroup (cgroup.procs).
  // Errors: kInvalidArgument (pid <= 0), kNotFound (no such cgroup, or no
  // such process).
  virtual Status AddProcess(const std::string& path, int64_t pid) = 0;

  // The hard limit: v2 memory.max, v1 memory.limit_in_bytes. nullopt removes
  // the limit ("max", or -1 on v1). Errors: kNotFound (no such cgroup, or v2
  // without the memory controller), kFailedPrecondition (v1: usage cannot be
  // reclaimed below the new limit, EBUSY), kInvalidArgument (the kernel
  // refused the value, e.g. v1 limit above memory.memsw.limit_in_bytes).
  virtual Status SetMemoryMax(const std::string& path, std::optional<uint64_t> bytes) = 0;

  // The throttle line: v2 memory.high (nullopt: "max"). Errors: as
  // SetMemoryMax; on v1, which has no such line, always kFailedPrecondition
  // (callers check version() or treat it as "not available here").
  virtual Status SetMemoryHigh(const std::string& path, std::optional<uint64_t> bytes) = 0;

  // Charged memory, page cache included: v2 memory.current, v1
  // memory.usage_in_bytes. Errors: kNotFound.
  virtual Result<uint64_t> MemoryCurrent(const std::string& path) = 0;

  // The hard limit; nullopt when unlimited. Errors: kNotFound.
  virtual Result<std::optional<uint64_t>> MemoryLimit(const std::string& path) = 0;

  // File cache of the cgroup and its descendants that the kernel can
  // reclaim before it OOM-kills: active and inactive file pages less those
  // dirty or under writeback (v2 memory.stat active_file + inactive_file -
  // file_dirty - file_writeback; v1 the total_* of the same). Errors:
  // kNotFound (no cgroup or no such key).
  virtual Result<uint64_t> ReclaimableFile(const std::string& path) = 0;

  // Memory pressure of the cgroup: v2 memory.pressure. Errors: kNotFound,
  // kFailedPrecondition (v1 has no per-cgroup PSI; a v2 kernel without PSI).
  virtual Result<Pressure> MemoryPressure(const std::string& path) = 0;

  // Processes in the cgroup and in its child cgroups (each cgroup.procs,
  // parent first): a job's processes, those of its frozen pause groups
  // included. The root's are its own alone. Errors: kNotFound.
  virtual Result<std::vector<int64_t>> Processes(const std::string& path) = 0;

  // How often the kernel's OOM killer has killed in the cgroup: "oom_kill"
  // of v2 memory.events or v1 memory.oom_control. Errors: kNotFound (no
  // cgroup), kFailedPrecondition (the kernel does not report oom_kill: v1
  // before Linux 4.13).
  virtual Result<uint64_t> OomKillCount(const std::string& path) = 0;

  // SIGKILLs every process of the cgroup at once: v2 writes "1" to
  // cgroup.kill (Linux 5.14+; it takes child cgroups too); otherwise every
  // pid of Processes is sent SIGKILL, re-reading until none is left so
  // that children forked meanwhile die too. Returns once Processes reads
  // empty (exited processes are not listed, reaped or not), so the return
  // marks "victim dead". Errors: kNotFound (no cgroup), kUnavailable
  // (processes remain after the driver's kill timeout: stuck in the kernel),
  // and the first error of ProcessControl::Signal.
  virtual Status KillAll(const std::string& path) = 0;
};

// Picks the driver for this host's memory controller: v2 at
// sys/fs/cgroup; v1 at sys/fs/cgroup/memory; on a hybrid host v2 at
// sys/fs/cgroup/unified when its cgroup.controllers lists memory, else v1.
// Paths are under fs.root(). Errors: kFailedPrecondition (no memory
// controller mounted where expected).
// `processes` must outlive the driver.
Result<std::unique_ptr<CgroupDriver>> MakeCgroupDriver(const HostFs& fs, ProcessControl& processes,
                                                       CgroupDriverOptions options = {});

}  // namespace gpuctl::sys
