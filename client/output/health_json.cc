#include "client/output/health_json.h"

#include "client/output/where_running_output.h"

namespace gpuctl::client {
namespace {

using nlohmann::json;

const char* CgroupVersionText(v1::CgroupVersion v) {
  switch (v) {
    case v1::CGROUP_VERSION_V1: return "1";
    case v1::CGROUP_VERSION_V2: return "2";
    case v1::CGROUP_VERSION_HYBRID: return "hybrid";
    default: return "unknown";
  }
}

const char* ContainerText(v1::ContainerKind k) {
  switch (k) {
    case v1::CONTAINER_KIND_NONE: return "none";
    case v1::CONTAINER_KIND_LXC: return "lxc";
    case v1::CONTAINER_KIND_DOCKER: return "docker";
    case v1::CONTAINER_KIND_OTHER: return "other";
    default: return "unknown";
  }
}

const char* GpuSourceText(v1::GpuSource s) {
  switch (s) {
    case v1::GPU_SOURCE_NVML: return "nvml";
    case v1::GPU_SOURCE_NVIDIA_SMI: return "nvidia-smi";
    default: return "none";
  }
}

// An optional proto field as a JSON value or null.
template <typename Msg, typename Has, typename Get>
json Optional(const Msg& m, Has has, Get get) {
  return (m.*has)() ? json((m.*get)()) : json(nullptr);
}

}  // namespace

json GpuFaultJson(const v1::GpuFault& f) {
  return {{"xid", f.has_xid() ? json(f.xid()) : json(nullptr)},
          {"message", f.message()},
          {"since_unix_ms", f.since_unix_ms()},
          {"manual", f.manual()},
          {"reason", f.reason()}};
}

namespace {

json GpuJson(const v1::Gpu& g) {
  json processes = json::array();
  for (const v1::GpuProcess& p : g.processes()) {
    processes.push_back({{"pid", p.pid()}, {"name", p.name()}, {"used_memory_bytes", p.used_memory_bytes()}});
  }
  json reasons = json::array();
  for (const std::string& r : g.clock_event_reasons()) reasons.push_back(r);
  return {
      {"index", g.index()},
      {"uuid", g.uuid()},
      {"name", g.name()},
      {"pci_bus_id", g.pci_bus_id()},
      {"compute_capability", g.compute_capability()},
      {"driver_version", g.driver_version()},
      {"memory_total_bytes", Optional(g, &v1::Gpu::has_memory_total_bytes, &v1::Gpu::memory_total_bytes)},
      {"memory_used_bytes", Optional(g, &v1::Gpu::has_memory_used_bytes, &v1::Gpu::memory_used_bytes)},
      {"memory_free_bytes", Optional(g, &v1::Gpu::has_memory_free_bytes, &v1::Gpu::memory_free_bytes)},
      {"utilization_gpu_pct", Optional(g, &v1::Gpu::has_utilization_gpu_pct, &v1::Gpu::utilization_gpu_pct)},
      {"utilization_memory_pct",
       Optional(g, &v1::Gpu::has_utilization_memory_pct, &v1::Gpu::utilization_memory_pct)},
      {"temperature_c", Optional(g, &v1::Gpu::has_temperature_c, &v1::Gpu::temperature_c)},
      {"power_draw_w", Optional(g, &v1::Gpu::has_power_draw_w, &v1::Gpu::power_draw_w)},
      {"power_limit_w", Optional(g, &v1::Gpu::has_power_limit_w, &v1::Gpu::power_limit_w)},
      {"clock_event_reasons", reasons},
      {"ecc_uncorrected", Optional(g, &v1::Gpu::has_ecc_uncorrected, &v1::Gpu::ecc_uncorrected)},
      {"retired_pages_pending",
       Optional(g, &v1::Gpu::has_retired_pages_pending, &v1::Gpu::retired_pages_pending)},
      {"row_remap_pending", Optional(g, &v1::Gpu::has_row_remap_pending, &v1::Gpu::row_remap_pending)},
      {"row_remap_failure", Optional(g, &v1::Gpu::has_row_remap_failure, &v1::Gpu::row_remap_failure)},
      {"lost", g.lost()},
      {"processes", processes},
      {"drained", g.drained()},
      {"fault", g.drained() ? GpuFaultJson(g.fault()) : json(nullptr)},
  };
}

}  // namespace

json HealthToJson(const v1::HealthSnapshot& s) {
  const v1::HostHealth& h = s.host();
  json psi = nullptr;
  if (h.has_memory_pressure()) {
    const v1::MemoryPressure& m = h.memory_pressure();
    json memory = {{"some_avg10", m.some().avg10()}, {"some_avg60", m.some().avg60()},
                   {"some_total_us", m.some().total_us()}};
    memory["full_avg10"] = m.has_full() ? json(m.full().avg10()) : json(nullptr);
    memory["full_avg60"] = m.has_full() ? json(m.full().avg60()) : json(nullptr);
    memory["full_total_us"] = m.has_full() ? json(m.full().total_us()) : json(nullptr);
    psi = {{"memory", memory}};
  }
  json host = {
      {"hostname", h.hostname()},
      {"kernel", h.kernel()},
      {"os_release", h.os_release()},
      {"cpus", h.cpus()},
      {"load1", h.load1()},
      {"load5", h.load5()},
      {"load15", h.load15()},
      {"uptime_seconds", h.uptime_seconds()},
      {"mem_total_bytes", h.mem_total_bytes()},
      {"mem_available_bytes", h.mem_available_bytes()},
      {"swap_total_bytes", h.swap_total_bytes()},
      {"swap_free_bytes", h.swap_free_bytes()},
      {"psi", psi},
      {"cgroup_version", CgroupVersionText(h.cgroup_version())},
      {"container", ContainerText(h.container())},
      {"where", WhereRunningJson(h.where())},
  };
  json gpus = json::array();
  for (const v1::Gpu& g : s.gpus()) gpus.push_back(GpuJson(g));
  json out = {
      {"sampled_at_unix_ms", s.sampled_at_unix_ms()},
      {"host", host},
      {"gpu_source", GpuSourceText(s.gpu_source())},
      {"gpus", gpus},
  };
  if (!s.gpu_error().empty()) out["gpu_error"] = s.gpu_error();
  return out;
}

}  // namespace gpuctl::client
