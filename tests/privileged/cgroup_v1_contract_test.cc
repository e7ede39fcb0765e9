// The cgroup driver contract (tests/fakes/cgroup_driver_contract.h) on this
// host's kernel: the v1 driver over the real memory hierarchy, in a cgroup
// of this test's own under its memory cgroup, with real processes (forked
// sleepers) and real SIGKILLs. The same suite runs on the fake and the
// fixture trees in unit_sys, so the fake answers as the kernel does. Needs
// root and a writable v1 memory hierarchy; skips with the reason otherwise.
// (CgroupDriverFiguresContract is not run here: the kernel's figures are its own.)
#include "tests/fakes/cgroup_driver_contract.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "agents/sys/host_fs.h"
#include "agents/sys/process_control.h"
#include "tests/privileged/memory_cgroup_support.h"

namespace gpuctl::testing {
namespace {

class RealV1World final : public CgroupWorld {
 public:
  static std::unique_ptr<CgroupWorld> Make(CgroupWorldUnavailable* unavailable) {
    if (::geteuid() != 0) {
      unavailable->why = "needs root to create memory cgroups";
      return nullptr;
    }
    std::unique_ptr<RealV1World> world(new RealV1World());
    world->processes_ = sys::MakeProcessControl(world->fs_);
    auto driver = sys::MakeCgroupDriver(world->fs_, *world->processes_);
    if (!driver.ok()) {
      *unavailable = {"no memory controller: " + driver.status().ToString(), /*platform=*/true};
      return nullptr;
    }
    if ((*driver)->version() != sys::CgroupVersion::kV1) {
      *unavailable = {"this host's memory controller is cgroup v2", /*platform=*/true};
      return nullptr;
    }
    world->driver_ = std::move(*driver);
    // Made here, not by the driver under test.
    world->base_ = OwnMemoryCgroup() + "/gpuctl-contract-" + std::to_string(::getpid());
    world->dir_ = kMemoryRoot + world->base_;
    if (::mkdir(world->dir_.c_str(), 0755) != 0) {
      unavailable->why = "cannot create " + world->dir_ + ": " + std::strerror(errno);
      return nullptr;
    }
    return world;
  }

  ~RealV1World() override {
    for (pid_t pid : children_) ::kill(pid, SIGKILL);
    for (pid_t pid : children_) ::waitpid(pid, nullptr, 0);
    if (!dir_.empty()) KillAndRemove(dir_);
  }

  sys::CgroupDriver& driver() override { return *driver_; }
  std::string base() const override { return base_; }

  // A forked child that sleeps until killed, written into the cgroup's
  // cgroup.procs directly (not through the driver under test).
  int64_t StartProcessIn(const std::string& path) override {
    pid_t pid = ::fork();
    if (pid == 0) {
      while (true) ::pause();
    }
    EXPECT_GT(pid, 0) << std::strerror(errno);
    if (pid <= 0) return 0;
    children_.push_back(pid);
    std::ofstream procs(kMemoryRoot + path + "/cgroup.procs");
    procs << pid << std::flush;
    EXPECT_TRUE(procs.good()) << "cannot move " << pid << " into " << path;
    return pid;
  }
  bool MovesProcesses() const override { return true; }

 private:
  RealV1World() = default;

  sys::HostFs fs_{"/"};
  std::unique_ptr<sys::ProcessControl> processes_;
  std::unique_ptr<sys::CgroupDriver> driver_;
  std::string base_;
  std::string dir_;
  std::vector<pid_t> children_;
};

INSTANTIATE_TEST_SUITE_P(Kernel, CgroupDriverContract,
                         ::testing::Values(CgroupWorldFactory{"RealV1", sys::CgroupVersion::kV1, RealV1World::Make}),
                         CgroupWorldName);

}  // namespace
}  // namespace gpuctl::testing
