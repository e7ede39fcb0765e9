#include "client/output/health_text.h"

#include <cstdio>

#include "client/output/table.h"
#include "client/output/where_running_output.h"
#include "common/utf8.h"
#include "common/units.h"

namespace gpuctl::client {
namespace {

std::string Fixed(double v, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string GpuMemory(const v1::Gpu& g) {
  if (!g.has_memory_total_bytes()) return "-";
  std::string used = g.has_memory_used_bytes() ? FormatBytes(g.memory_used_bytes()) : "?";
  return used + " / " + FormatBytes(g.memory_total_bytes());
}

std::string HostLine(const v1::HostHealth& h) {
  // Host name, OS and kernel strings are read from files a container can write.
  std::string line = EscapeForTerminal(h.hostname()) + "  " + EscapeForTerminal(h.os_release()) + "  kernel " +
                     EscapeForTerminal(h.kernel()) + "  " +
                     std::to_string(h.cpus()) + " cpus  load " + Fixed(h.load1(), 2) + "  mem " +
                     FormatBytes(h.mem_available_bytes()) + " free of " + FormatBytes(h.mem_total_bytes());
  if (h.swap_total_bytes() > 0) line += "  swap " + FormatBytes(h.swap_free_bytes()) + " free";
  if (h.has_memory_pressure()) {
    line += "  psi some " + Fixed(h.memory_pressure().some().avg10(), 2) + "%";
    if (h.memory_pressure().has_full()) line += " full " + Fixed(h.memory_pressure().full().avg10(), 2) + "%";
  }
  static const char* kCgroup[] = {"?", "v1", "v2", "hybrid"};
  int cg = h.cgroup_version();
  line += std::string("  cgroup ") + (cg >= 0 && cg <= 3 ? kCgroup[cg] : "?");
  // The same words as `probe`'s os line; an agent older than `where` has only `container`.
  if (std::string where = WhereRunningText(h.where()); !where.empty()) {
    line += "  " + where;
  } else if (h.container() == v1::CONTAINER_KIND_LXC) {
    line += "  in lxc";
  } else if (h.container() == v1::CONTAINER_KIND_DOCKER) {
    line += "  in docker";
  } else if (h.container() == v1::CONTAINER_KIND_OTHER) {
    line += "  in a container";
  }
  return line + "\n";
}

}  // namespace

std::string HealthToText(const v1::HealthSnapshot& s) {
  std::string out = HostLine(s.host());
  if (s.gpus_size() == 0) {
    out += "no GPUs" + (s.gpu_error().empty() ? std::string() : ": " + EscapeForTerminal(s.gpu_error())) + "\n";
    return out;
  }
  Table table({"GPU", "NAME", "MEMORY", "UTIL", "TEMP", "POWER", "PROCS", "CLOCK EVENTS"});
  for (const v1::Gpu& g : s.gpus()) {
    std::string reasons;
    for (const std::string& r : g.clock_event_reasons()) reasons += (reasons.empty() ? "" : ",") + r;
    std::string power = g.has_power_draw_w() ? Fixed(g.power_draw_w(), 0) + "W" : "-";
    if (g.has_power_draw_w() && g.has_power_limit_w()) power += " / " + Fixed(g.power_limit_w(), 0) + "W";
    table.AddRow({std::to_string(g.index()), g.name(), GpuMemory(g),
                  g.has_utilization_gpu_pct() ? std::to_string(g.utilization_gpu_pct()) + "%" : "-",
                  g.has_temperature_c() ? std::to_string(g.temperature_c()) + "C" : "-", power,
                  std::to_string(g.processes_size()), reasons.empty() ? "-" : reasons});
  }
  out += table.Render();
  for (const v1::Gpu& g : s.gpus()) {
    if (!g.drained()) continue;
    out += "GPU " + std::to_string(g.index()) + " DRAINED: " + EscapeForTerminal(g.fault().reason()) +
           (g.fault().manual() ? " (by hand)" : "") + "; no job is placed on it (gpuctl gpu undrain " +
           std::to_string(g.index()) + ")\n";
  }
  if (!s.gpu_error().empty()) out += "warning: " + EscapeForTerminal(s.gpu_error()) + "\n";
  return out;
}

}  // namespace gpuctl::client
