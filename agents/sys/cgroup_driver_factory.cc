// Chooses the cgroup driver for the host's memory controller.
#include <memory>

#include "agents/sys/cgroup_driver.h"
#include "agents/sys/cgroup_io.h"
#include "agents/sys/cgroup_parsers.h"
#include "agents/sys/cgroup_v1_driver.h"
#include "agents/sys/cgroup_v2_driver.h"

namespace gpuctl::sys {
namespace {

// An empty directory where a controller should be mounted is not a
// controller; memory.limit_in_bytes is in every v1 memory cgroup.
Result<std::unique_ptr<CgroupDriver>> V1At(const HostFs& fs, ProcessControl& processes,
                                            CgroupDriverOptions options) {
  std::string mount = fs.Path("sys/fs/cgroup/memory");
  if (!ControlFileExists(mount + "/memory.limit_in_bytes")) {
    return FailedPrecondition("no cgroup v1 memory controller mounted at " + mount +
                              "; mount it there or boot with the unified (v2) hierarchy");
  }
  return std::unique_ptr<CgroupDriver>(std::make_unique<CgroupV1Driver>(mount, processes, options));
}

}  // namespace

Result<std::unique_ptr<CgroupDriver>> MakeCgroupDriver(const HostFs& fs, ProcessControl& processes,
                                                       CgroupDriverOptions options) {
  switch (fs.DetectCgroupVersion()) {
    case CgroupVersion::kV2:
      return std::unique_ptr<CgroupDriver>(
          std::make_unique<CgroupV2Driver>(fs.Path("sys/fs/cgroup"), processes, options));
    case CgroupVersion::kHybrid: {
      // systemd's hybrid layout mounts v2 at unified/ with no controllers
      // unless memory was moved there; the v1 memory controller is the norm.
      std::string unified = fs.Path("sys/fs/cgroup/unified");
      Result<std::string> controllers = ReadControlFile(unified + "/cgroup.controllers");
      if (controllers.ok() && ControllerListHas(*controllers, "memory")) {
        return std::unique_ptr<CgroupDriver>(std::make_unique<CgroupV2Driver>(unified, processes, options));
      }
      return V1At(fs, processes, options);
    }
    case CgroupVersion::kV1:
      return V1At(fs, processes, options);
    case CgroupVersion::kUnknown:
      break;
  }
  return FailedPrecondition("no cgroup hierarchy found at " + fs.Path("sys/fs/cgroup") +
                            "; the memory guard needs cgroup v2 or the v1 memory controller");
}

}  // namespace gpuctl::sys
