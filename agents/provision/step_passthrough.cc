// passthrough (with --container): the container's config must pass the
// host's NVIDIA devices in, or nothing inside it sees a GPU. The step never
// edits the config (Proxmox owns it, and the container must restart for it
// to apply); it refuses and prints exactly the missing lines.
#include "agents/provision/passthrough.h"
#include "agents/provision/steps.h"
#include "agents/sys/directory_listing.h"
#include "agents/sys/host_fs.h"

namespace gpuctl::provision {
namespace {

class PassthroughStep final : public Step {
 public:
  explicit PassthroughStep(const StepContext& context) : context_(context) {}
  std::string Name() const override { return std::string(kStepPassthrough); }

  Result<StepCheck> Check() override {
    sys::HostFs host(context_.config.system_root);
    const std::string config_path = "etc/pve/lxc/" + context_.target.container() + ".conf";
    auto config = host.ReadFile(config_path);
    if (!config.ok()) {
      return Refusal("cannot read /" + config_path + " (" + config.status().message() +
                     "): --container needs a Proxmox host and an existing container VMID");
    }
    PassthroughInput input;
    input.container_config = *config;
    input.proc_devices = host.ReadFile("proc/devices").value_or("");
    for (const std::string& name : sys::ListDirectoryNames(host.Path("dev"))) {
      if (name.rfind("nvidia", 0) == 0) input.dev_nodes.push_back(name);
    }
    std::vector<std::string> missing = MissingPassthroughLines(input);
    StepCheck check;
    if (missing.empty() && !UvmNotLoaded(input)) {
      check.done = true;
      check.detail = "/" + config_path + " passes the host's NVIDIA devices in (" +
                     std::to_string(input.dev_nodes.size()) + " nodes)";
      return check;
    }
    std::string message = "container " + context_.target.container() + " lacks GPU passthrough";
    if (!missing.empty()) {
      message += ": add these " + std::to_string(missing.size()) + " lines to /" + config_path +
                 " and restart it (pct reboot " + context_.target.container() + "):";
    }
    for (const std::string& line : missing) message += "\n  " + line;
    if (UvmNotLoaded(input)) {
      message += "\nnvidia_uvm is not loaded on the host, so CUDA in the container has no /dev/nvidia-uvm and its "
                 "cgroup line cannot be written yet: load it (modprobe nvidia_uvm && nvidia-modprobe -c0 -u; "
                 "gpuctl provision node --steps driver on the host loads it at every boot), then rerun for the "
                 "lxc.cgroup2.devices.allow line of its major";
    }
    return Refusal(message);
  }

  Result<StepPlan> Plan(const StepCheck&) override { return StepPlan{}; }

 private:
  const StepContext& context_;
};

}  // namespace

std::unique_ptr<Step> MakePassthroughStep(const StepContext& context) {
  return std::make_unique<PassthroughStep>(context);
}

}  // namespace gpuctl::provision
