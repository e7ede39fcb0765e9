#include "client/output/probe_json.h"

#include "client/output/where_running_output.h"

namespace gpuctl::client {
namespace {

using nlohmann::json;

json OrNull(const std::string& value) { return value.empty() ? json(nullptr) : json(value); }

json Strings(const google::protobuf::RepeatedPtrField<std::string>& values) {
  json out = json::array();
  for (const std::string& value : values) out.push_back(value);
  return out;
}

}  // namespace

json ProbeToJson(const v1::HostProbe& p) {
  json gpus = json::array();
  for (const v1::PciGpu& g : p.gpus()) {
    gpus.push_back({{"pci_address", g.pci_address()}, {"pci_class", OrNull(g.pci_class())},
                    {"vendor_id", g.vendor_id()}, {"device_id", OrNull(g.device_id())}, {"name", OrNull(g.name())},
                    {"compute_capability", OrNull(g.compute_capability())}});
  }
  json toolkits = json::array();
  for (const v1::CudaToolkit& t : p.cuda_toolkits()) {
    toolkits.push_back({{"path", t.path()}, {"version", t.version()}, {"build", OrNull(t.build())}});
  }
  json venvs = json::array();
  for (const v1::PythonVenv& v : p.venvs()) {
    venvs.push_back({{"path", v.path()}, {"python_version", OrNull(v.python_version())},
                     {"torch_version", OrNull(v.torch_version())}, {"torch_cuda", OrNull(v.torch_cuda())}});
  }
  json module = nullptr;
  if (p.has_driver_module()) {
    module = {{"version", p.driver_module().version()}, {"flavor", p.driver_module().flavor()}};
  }
  return {
      {"os_id", OrNull(p.os_id())},
      {"os_version_id", OrNull(p.os_version_id())},
      {"os_pretty_name", OrNull(p.os_pretty_name())},
      {"kernel_release", OrNull(p.kernel_release())},
      {"kernel_headers_installed", p.kernel_headers_installed()},
      {"cpus", p.cpus()},
      {"mem_total_bytes", p.mem_total_bytes()},
      {"mem_available_bytes", p.mem_available_bytes()},
      {"gpus", gpus},
      {"gpu_archs", Strings(p.gpu_archs())},
      {"driver_module", module},
      {"driver_library_version", OrNull(p.driver_library_version())},
      {"driver_version_mismatch", p.driver_version_mismatch()},
      {"cuda_toolkits", toolkits},
      {"uv_version", OrNull(p.uv_version())},
      {"python_version", OrNull(p.python_version())},
      {"venvs", venvs},
      {"lxc_guest", p.lxc_guest()},
      {"proxmox_host", p.proxmox_host()},
      {"proxmox_version", OrNull(p.proxmox_version())},
      {"notes", Strings(p.notes())},
      {"where", WhereRunningJson(p.where())},
  };
}

}  // namespace gpuctl::client
