#include "daemon/service/health_convert.h"
#include "daemon/service/proto_text.h"
#include "daemon/service/where_running_convert.h"

#include <chrono>

namespace gpuctl::daemon {
namespace {

void ToProto(const sys::PressureLine& in, v1::PressureLine& out) {
  out.set_avg10(in.avg10);
  out.set_avg60(in.avg60);
  out.set_avg300(in.avg300);
  out.set_total_us(in.total_us);
}

v1::CgroupVersion ToProto(sys::CgroupVersion v) {
  switch (v) {
    case sys::CgroupVersion::kV1: return v1::CGROUP_VERSION_V1;
    case sys::CgroupVersion::kV2: return v1::CGROUP_VERSION_V2;
    case sys::CgroupVersion::kHybrid: return v1::CGROUP_VERSION_HYBRID;
    case sys::CgroupVersion::kUnknown: break;
  }
  return v1::CGROUP_VERSION_UNSPECIFIED;
}

// The older, coarser field: a VM or bare metal is "no container".
v1::ContainerKind ContainerKindOf(sys::WhereKind k) {
  switch (k) {
    case sys::WhereKind::kBareMetal:
    case sys::WhereKind::kVm: return v1::CONTAINER_KIND_NONE;
    case sys::WhereKind::kLxc: return v1::CONTAINER_KIND_LXC;
    case sys::WhereKind::kDocker: return v1::CONTAINER_KIND_DOCKER;
    case sys::WhereKind::kPodman:
    case sys::WhereKind::kOtherContainer: return v1::CONTAINER_KIND_OTHER;
  }
  return v1::CONTAINER_KIND_UNSPECIFIED;
}

v1::GpuSource ToProto(sys::GpuSourceKind s) {
  switch (s) {
    case sys::GpuSourceKind::kNone: return v1::GPU_SOURCE_NONE;
    case sys::GpuSourceKind::kNvml: return v1::GPU_SOURCE_NVML;
    case sys::GpuSourceKind::kNvidiaSmi: return v1::GPU_SOURCE_NVIDIA_SMI;
  }
  return v1::GPU_SOURCE_UNSPECIFIED;
}

void ToProto(const health::HostHealth& in, v1::HostHealth& out) {
  out.set_hostname(in.hostname);
  out.set_kernel(in.kernel);
  out.set_os_release(in.os_release);
  out.set_cpus(in.cpus);
  out.set_load1(in.load.load1);
  out.set_load5(in.load.load5);
  out.set_load15(in.load.load15);
  out.set_uptime_seconds(in.uptime_seconds);
  out.set_mem_total_bytes(in.mem_total_bytes);
  out.set_mem_available_bytes(in.mem_available_bytes);
  out.set_swap_total_bytes(in.swap_total_bytes);
  out.set_swap_free_bytes(in.swap_free_bytes);
  if (in.memory_pressure) {
    v1::MemoryPressure* psi = out.mutable_memory_pressure();
    ToProto(in.memory_pressure->some, *psi->mutable_some());
    if (in.memory_pressure->full) ToProto(*in.memory_pressure->full, *psi->mutable_full());
  }
  out.set_cgroup_version(ToProto(in.cgroup_version));
  out.set_container(ContainerKindOf(in.where.kind));
  WhereRunningToProto(in.where, *out.mutable_where());
}

void ToProto(const sys::GpuDevice& in, v1::Gpu& out) {
  out.set_index(in.index);
  out.set_uuid(in.uuid);
  out.set_name(in.name);
  out.set_pci_bus_id(in.pci_bus_id);
  out.set_compute_capability(in.compute_capability);
  out.set_driver_version(in.driver_version);
  if (in.memory_total_bytes) out.set_memory_total_bytes(*in.memory_total_bytes);
  if (in.memory_used_bytes) out.set_memory_used_bytes(*in.memory_used_bytes);
  if (in.memory_free_bytes) out.set_memory_free_bytes(*in.memory_free_bytes);
  if (in.utilization_gpu_pct) out.set_utilization_gpu_pct(*in.utilization_gpu_pct);
  if (in.utilization_memory_pct) out.set_utilization_memory_pct(*in.utilization_memory_pct);
  if (in.temperature_c) out.set_temperature_c(*in.temperature_c);
  if (in.power_draw_w) out.set_power_draw_w(*in.power_draw_w);
  if (in.power_limit_w) out.set_power_limit_w(*in.power_limit_w);
  for (const std::string& r : in.clock_event_reasons) out.add_clock_event_reasons(r);
  if (in.ecc_uncorrected) out.set_ecc_uncorrected(*in.ecc_uncorrected);
  if (in.retired_pages_pending) out.set_retired_pages_pending(*in.retired_pages_pending);
  if (in.row_remap_pending) out.set_row_remap_pending(*in.row_remap_pending);
  if (in.row_remap_failure) out.set_row_remap_failure(*in.row_remap_failure);
  out.set_lost(in.lost);
  for (const sys::GpuProcessInfo& p : in.processes) {
    v1::GpuProcess* proc = out.add_processes();
    proc->set_pid(p.pid);
    proc->set_name(p.name);
    proc->set_used_memory_bytes(p.used_memory_bytes);
  }
  if (in.drain) {
    out.set_drained(true);
    v1::GpuFault* fault = out.mutable_fault();
    if (in.drain->xid) fault->set_xid(*in.drain->xid);
    fault->set_message(in.drain->message);
    fault->set_since_unix_ms(in.drain->since_unix_ms);
    fault->set_manual(in.drain->manual);
    fault->set_reason(in.drain->reason);
  }
}

}  // namespace

void ToProto(const health::HealthSnapshot& in, v1::HealthSnapshot& out) {
  out.Clear();
  out.set_sampled_at_unix_ms(std::chrono::duration_cast<std::chrono::milliseconds>(
                                 in.sampled_at.time_since_epoch()).count());
  ToProto(in.host, *out.mutable_host());
  out.set_gpu_source(ToProto(in.gpus.source));
  out.set_gpu_error(in.gpus.error);
  for (const sys::GpuDevice& d : in.gpus.devices) ToProto(d, *out.add_gpus());
  MakeStringsUtf8(out);
}

}  // namespace gpuctl::daemon
