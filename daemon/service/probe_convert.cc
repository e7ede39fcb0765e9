#include "daemon/service/probe_convert.h"

#include "agents/provision/probe_gpu_arch.h"
#include "agents/sys/environment.h"
#include "daemon/service/proto_text.h"
#include "daemon/service/where_running_convert.h"

namespace gpuctl::daemon {

void ToProto(const provision::HostProbe& in, v1::HostProbe& out) {
  out.set_os_id(in.os_id);
  out.set_os_version_id(in.os_version_id);
  out.set_os_pretty_name(in.os_pretty_name);
  out.set_kernel_release(in.kernel_release);
  out.set_kernel_headers_installed(in.kernel_headers_installed);
  out.set_cpus(in.cpus);
  out.set_mem_total_bytes(in.mem_total_bytes);
  out.set_mem_available_bytes(in.mem_available_bytes);
  for (const provision::ProbedGpu& gpu : in.gpus) {
    v1::PciGpu* g = out.add_gpus();
    g->set_pci_address(gpu.pci_address);
    g->set_pci_class(gpu.pci_class);
    g->set_vendor_id(gpu.vendor_id);
    g->set_device_id(gpu.device_id);
    g->set_name(gpu.name);
    g->set_compute_capability(gpu.compute_capability);
  }
  for (const std::string& arch : in.gpu_archs) out.add_gpu_archs(arch);
  if (in.driver_module) {
    out.mutable_driver_module()->set_version(in.driver_module->version);
    out.mutable_driver_module()->set_flavor(in.driver_module->open ? "open" : "proprietary");
  }
  out.set_driver_library_version(in.driver_library_version);
  out.set_driver_version_mismatch(in.driver_version_mismatch);
  for (const provision::CudaToolkit& toolkit : in.cuda_toolkits) {
    v1::CudaToolkit* t = out.add_cuda_toolkits();
    t->set_path(toolkit.path);
    t->set_version(toolkit.version);
    t->set_build(toolkit.build);
  }
  out.set_uv_version(in.uv_version);
  out.set_python_version(in.python_version);
  for (const provision::PythonVenv& venv : in.venvs) {
    v1::PythonVenv* v = out.add_venvs();
    v->set_path(venv.path);
    v->set_python_version(venv.python_version);
    v->set_torch_version(venv.torch_version);
    v->set_torch_cuda(venv.torch_cuda);
  }
  out.set_lxc_guest(in.lxc_guest);
  WhereRunningToProto(in.where, *out.mutable_where());
  out.set_proxmox_host(in.proxmox_host);
  out.set_proxmox_version(in.proxmox_version);
  for (const std::string& note : in.notes) out.add_notes(note);
  MakeStringsUtf8(out);
}

provision::DriverReport DriverReportFrom(const sys::GpuReport& gpus) {
  provision::DriverReport report;
  for (const sys::GpuDevice& gpu : gpus.devices) {
    if (report.library_version.empty()) report.library_version = gpu.driver_version;
    if (!gpu.pci_bus_id.empty() && !gpu.compute_capability.empty()) {
      report.compute_capability_by_pci[provision::NormalizePciAddress(gpu.pci_bus_id)] = gpu.compute_capability;
    }
  }
  return report;
}

void AddDriverAnswers(provision::ProbeOptions& options, health::HealthSampler& sampler) {
  if (Result<health::HealthSnapshot> health = sampler.Sample(); health.ok()) options.driver = DriverReportFrom(health->gpus);
}

provision::ProbeOptions DefaultProbeOptions() {
  provision::ProbeOptions options;
  std::optional<std::string> home = sys::EnvironmentVariable("HOME");
  options.home_dir = home && home->starts_with('/') ? *home : "/root";
  options.path_env = sys::EnvironmentVariable("PATH").value_or("/usr/local/bin:/usr/bin:/bin");
  return options;
}

}  // namespace gpuctl::daemon
