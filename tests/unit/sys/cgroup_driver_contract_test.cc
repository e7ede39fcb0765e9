// The cgroup driver contract (tests/fakes/cgroup_driver_contract.h) on the
// fake, v1 and v2, and on the real v1 and v2 drivers over fixture trees. The
// fixture's "kernel" is this file: it writes a new cgroup's control files,
// shows a v1 limit of -1 as PAGE_COUNTER_MAX, clears the files before an
// rmdir of a cgroup without processes or children, and takes a SIGKILLed pid
// out of cgroup.procs. (The v2 tree has no cgroup.kill,
// as before Linux 5.14, so KillAll signals each pid and the fixture can see
// them go; cgroup_driver_test.cc covers cgroup.kill.) Every directory under
// a cgroup is a cgroup, as in cgroupfs.
#include "tests/fakes/cgroup_driver_contract.h"

#include <signal.h>

#include <filesystem>
#include <memory>
#include <string>

#include "agents/sys/cgroup_io.h"
#include "agents/sys/cgroup_v1_driver.h"
#include "agents/sys/cgroup_v2_driver.h"
#include "tests/fakes/fake_cgroup_driver.h"
#include "tests/fakes/fake_process_control.h"
#include "tests/fakes/temp_dir.h"

namespace gpuctl::testing {
namespace {

namespace fs = std::filesystem;

class FixtureWorld final : public CgroupWorld {
 public:
  explicit FixtureWorld(sys::CgroupVersion version) : version_(version) {
    if (version_ == sys::CgroupVersion::kV2) {
      dir_.WriteFile("cgroup.controllers", "cpuset cpu io memory hugetlb pids rdma misc\n");
      dir_.WriteFile("cgroup.subtree_control", "cpu memory\n");
    } else {
      dir_.WriteFile("memory.limit_in_bytes", "9223372036854771712\n");
    }
    dir_.WriteFile("cgroup.procs", "1\n");
    dir_.MakeDir("contract");
    KernelCreated("/contract");
    // The kernel takes a killed process out of its cgroup.
    processes_.SetOnSignal([this](const FakeProcessControl::SentSignal& sent) {
      if (!sent.group && sent.sig == SIGKILL) Forget(sent.target);
    });
    if (version_ == sys::CgroupVersion::kV2) {
      driver_ = std::make_unique<sys::CgroupV2Driver>(dir_.path(), processes_);
    } else {
      driver_ = std::make_unique<sys::CgroupV1Driver>(dir_.path(), processes_);
    }
  }

  sys::CgroupDriver& driver() override { return *driver_; }
  std::string base() const override { return "/contract"; }

  void KernelCreated(const std::string& path) override {
    const std::string d = Dir(path) + "/";
    dir_.WriteFile(Rel(d + "cgroup.procs"), "");
    if (version_ == sys::CgroupVersion::kV2) {
      dir_.WriteFile(Rel(d + "cgroup.controllers"), "memory\n");
      dir_.WriteFile(Rel(d + "cgroup.subtree_control"), "");
      dir_.WriteFile(Rel(d + "cgroup.freeze"), "0\n");
      dir_.WriteFile(Rel(d + "cgroup.events"), "populated 0\nfrozen 0\n");
      dir_.WriteFile(Rel(d + "memory.max"), "max\n");
      dir_.WriteFile(Rel(d + "memory.high"), "max\n");
      dir_.WriteFile(Rel(d + "memory.pressure"),
                     "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n");
    } else {
      dir_.WriteFile(Rel(d + "memory.limit_in_bytes"), "9223372036854771712\n");
      dir_.WriteFile(Rel(d + "cgroup.event_control"), "");
    }
    SetFigures(path, {});
  }

  void KernelWroteLimit(const std::string& path) override {
    const std::string file = Dir(path) + "/memory.limit_in_bytes";
    if (version_ == sys::CgroupVersion::kV1 && sys::ReadControlFile(file).value_or("") == "-1") {
      dir_.WriteFile(Rel(file), "9223372036854771712\n");
    }
  }

  void KernelBeforeRemove(const std::string& path) override { Removable(Dir(path)); }

  int64_t StartProcessIn(const std::string& path) override {
    const int64_t pid = next_pid_++;
    const std::string procs = Dir(path) + "/cgroup.procs";
    std::string text = sys::ReadControlFile(procs).value_or("");
    dir_.WriteFile(Rel(procs), text + std::to_string(pid) + "\n");
    return pid;
  }
  bool MovesProcesses() const override { return false; }

  void SetFigures(const std::string& path, const Figures& f) override {
    const std::string d = Dir(path) + "/";
    auto n = [](uint64_t v) { return std::to_string(v); };
    if (version_ == sys::CgroupVersion::kV2) {
      dir_.WriteFile(Rel(d + "memory.current"), n(f.current) + "\n");
      dir_.WriteFile(Rel(d + "memory.stat"), "anon 0\nfile " + n(f.active_file + f.inactive_file) +
                                                 "\nactive_file " + n(f.active_file) + "\ninactive_file " +
                                                 n(f.inactive_file) + "\nfile_dirty " + n(f.dirty) +
                                                 "\nfile_writeback " + n(f.writeback) + "\n");
      dir_.WriteFile(Rel(d + "memory.events"),
                     "low 0\nhigh 0\nmax 0\noom " + n(f.oom_kills) + "\noom_kill " + n(f.oom_kills) + "\n");
    } else {
      dir_.WriteFile(Rel(d + "memory.usage_in_bytes"), n(f.current) + "\n");
      dir_.WriteFile(Rel(d + "memory.stat"),
                     "cache 0\nrss 0\nactive_file 0\ninactive_file 0\ntotal_active_file " + n(f.active_file) +
                         "\ntotal_inactive_file " + n(f.inactive_file) + "\ntotal_dirty " + n(f.dirty) +
                         "\ntotal_writeback " + n(f.writeback) + "\n");
      dir_.WriteFile(Rel(d + "memory.oom_control"),
                     "oom_kill_disable 0\nunder_oom 0\noom_kill " + n(f.oom_kills) + "\n");
    }
  }

 private:
  std::string Dir(const std::string& path) const { return sys::JoinCgroupPath(dir_.path(), path).value_or(""); }
  std::string Rel(const std::string& file) const { return file.substr(dir_.path().size() + 1); }
  // Clears the control files of `d` and of every cgroup below it, deepest
  // first, as far as none has processes: what the kernel would let rmdir
  // take. False when `d` must stay.
  bool Removable(const std::string& d) {
    if (!fs::is_directory(d)) return true;
    bool removable = true;
    for (const auto& entry : fs::directory_iterator(d)) {
      if (entry.is_directory() && !Removable(entry.path().string())) removable = false;
    }
    if (!removable) return false;
    if (!sys::ReadProcsFile(d + "/cgroup.procs").value_or(std::vector<int64_t>{1}).empty()) return false;
    for (const auto& entry : fs::directory_iterator(d)) {
      if (!entry.is_directory()) fs::remove(entry.path());
    }
    return true;
  }
  // Takes `pid` out of every cgroup.procs of the tree.
  void Forget(int64_t pid) {
    for (const auto& entry : fs::recursive_directory_iterator(dir_.path())) {
      if (entry.path().filename() != "cgroup.procs") continue;
      std::string kept;
      for (int64_t p : sys::ReadProcsFile(entry.path().string()).value_or(std::vector<int64_t>{})) {
        if (p != pid) kept += std::to_string(p) + "\n";
      }
      dir_.WriteFile(Rel(entry.path().string()), kept);
    }
  }

  const sys::CgroupVersion version_;
  TempDir dir_;
  FakeProcessControl processes_;
  std::unique_ptr<sys::CgroupDriver> driver_;
  int64_t next_pid_ = 30001;
};

class FakeWorld final : public CgroupWorld {
 public:
  explicit FakeWorld(sys::CgroupVersion version) : fake_(version) { fake_.Put("/contract", {}); }

  sys::CgroupDriver& driver() override { return fake_; }
  std::string base() const override { return "/contract"; }
  int64_t StartProcessIn(const std::string& path) override {
    const int64_t pid = next_pid_++;
    std::optional<FakeCgroupDriver::Cgroup> cgroup = fake_.Get(path);
    EXPECT_TRUE(cgroup.has_value()) << path;
    if (!cgroup) return pid;
    cgroup->procs.push_back(pid);
    fake_.Put(path, *cgroup);
    return pid;
  }
  bool MovesProcesses() const override { return true; }
  void SetFigures(const std::string& path, const Figures& f) override {
    std::optional<FakeCgroupDriver::Cgroup> cgroup = fake_.Get(path);
    ASSERT_TRUE(cgroup.has_value()) << path;
    cgroup->current = f.current;
    cgroup->reclaimable_file = f.active_file + f.inactive_file - f.dirty - f.writeback;
    cgroup->oom_kills = f.oom_kills;
    fake_.Put(path, *cgroup);
  }

 private:
  FakeCgroupDriver fake_;
  int64_t next_pid_ = 40001;
};

template <typename World>
CgroupWorldFactory Factory(std::string name, sys::CgroupVersion version) {
  return {std::move(name), version,
          [version](CgroupWorldUnavailable*) -> std::unique_ptr<CgroupWorld> { return std::make_unique<World>(version); }};
}

const auto kWorlds = ::testing::Values(Factory<FakeWorld>("FakeV2", sys::CgroupVersion::kV2),
                                       Factory<FakeWorld>("FakeV1", sys::CgroupVersion::kV1),
                                       Factory<FixtureWorld>("FixtureV2", sys::CgroupVersion::kV2),
                                       Factory<FixtureWorld>("FixtureV1", sys::CgroupVersion::kV1));
INSTANTIATE_TEST_SUITE_P(Drivers, CgroupDriverContract, kWorlds, CgroupWorldName);
INSTANTIATE_TEST_SUITE_P(Drivers, CgroupDriverFiguresContract, kWorlds, CgroupWorldName);

}  // namespace
}  // namespace gpuctl::testing
