#include "client/output/fleet_text.h"

#include <cstdio>
#include <functional>

#include "client/output/job_text.h"
#include "client/output/table.h"
#include "common/utf8.h"
#include "common/units.h"

namespace gpuctl::client {
namespace {

std::string Percent(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f%%", v);
  return buf;
}

std::string Watts(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0fW", v);
  return buf;
}

template <typename Answer>
bool AddErrorRow(Table& table, const NodeRow<Answer>& row) {
  if (row.answer != nullptr) return false;
  table.AddSpanningRow(row.node, "error: " + FirstLine(row.error));
  return true;
}

}  // namespace

std::string FirstLine(const std::string& message) {
  return EscapeForTerminal(std::string_view(message).substr(0, message.find('\n')));
}

std::string HostMemoryText(const v1::HostHealth& host) { return FormatBytes(host.mem_available_bytes()); }

std::string HostPressureText(const v1::HostHealth& host) {
  if (!host.has_memory_pressure()) return "-";
  const v1::MemoryPressure& psi = host.memory_pressure();
  return Percent(psi.some().avg10()) + "/" + (psi.has_full() ? Percent(psi.full().avg10()) : "-");
}

std::string FleetHealthToText(const std::vector<NodeRow<v1::HealthSnapshot>>& rows) {
  Table table({"NODE", "MEM FREE", "PSI 10S", "GPU", "NAME", "MEMORY", "UTIL", "TEMP", "POWER"});
  for (const auto& row : rows) {
    if (AddErrorRow(table, row)) continue;
    const v1::HostHealth& host = row.answer->host();
    std::vector<std::string> node = {row.node, HostMemoryText(host), HostPressureText(host)};
    if (row.answer->gpus_size() == 0) {
      std::string why = row.answer->gpu_error().empty() ? "no GPUs" : "no GPUs: " + FirstLine(row.answer->gpu_error());
      node.push_back("-");
      table.AddSpanningRow(node, why);
      continue;
    }
    for (const v1::Gpu& g : row.answer->gpus()) {
      std::vector<std::string> cells = node;
      std::string memory = g.has_memory_total_bytes()
                               ? (g.has_memory_used_bytes() ? FormatBytes(g.memory_used_bytes()) : "?") + " / " +
                                     FormatBytes(g.memory_total_bytes())
                               : "-";
      cells.insert(cells.end(), {std::to_string(g.index()), g.name(), memory,
                                 g.has_utilization_gpu_pct() ? std::to_string(g.utilization_gpu_pct()) + "%" : "-",
                                 g.has_temperature_c() ? std::to_string(g.temperature_c()) + "C" : "-",
                                 g.has_power_draw_w() ? Watts(g.power_draw_w()) : "-"});
      table.AddRow(std::move(cells));
    }
  }
  return table.Render();
}

namespace {

// NODE and then train list's columns: a row per job `jobs_of` gives for a
// node, "no jobs" for a node with none.
template <typename Answer>
std::string NodeJobsTable(const std::vector<NodeRow<Answer>>& rows, int64_t now_unix_ms,
                          const std::function<std::vector<const v1::Job*>(const Answer&)>& jobs_of) {
  std::vector<std::string> header = JobListHeader();
  header.insert(header.begin(), "NODE");
  Table table(header);
  for (const auto& row : rows) {
    if (AddErrorRow(table, row)) continue;
    std::vector<const v1::Job*> jobs = jobs_of(*row.answer);
    if (jobs.empty()) table.AddSpanningRow(row.node, "no jobs");
    for (const v1::Job* job : jobs) {
      std::vector<std::string> cells = JobListRow(*job, now_unix_ms);
      cells.insert(cells.begin(), row.node);
      table.AddRow(std::move(cells));
    }
  }
  return table.Render();
}

}  // namespace

std::string FleetJobsToText(const std::vector<NodeRow<v1::ListJobsResponse>>& rows, int64_t now_unix_ms) {
  return NodeJobsTable<v1::ListJobsResponse>(rows, now_unix_ms, [](const v1::ListJobsResponse& list) {
    std::vector<const v1::Job*> jobs;
    for (const v1::Job& job : list.jobs()) jobs.push_back(&job);
    return jobs;
  });
}

std::string FleetJobToText(const std::vector<NodeRow<v1::Job>>& rows, int64_t now_unix_ms) {
  return NodeJobsTable<v1::Job>(rows, now_unix_ms, [](const v1::Job& job) { return std::vector<const v1::Job*>{&job}; });
}

std::string FleetProbeToText(const std::vector<NodeRow<v1::HostProbe>>& rows) {
  Table table({"NODE", "OS", "KERNEL", "CPUS", "MEMORY", "GPUS", "DRIVER", "CUDA", "PYTHON"});
  for (const auto& row : rows) {
    if (AddErrorRow(table, row)) continue;
    const v1::HostProbe& p = *row.answer;
    std::string cuda;
    for (const v1::CudaToolkit& t : p.cuda_toolkits()) cuda += (cuda.empty() ? "" : ",") + t.version();
    std::string driver = p.driver_library_version().empty()
                             ? (p.has_driver_module() ? p.driver_module().version() : "-")
                             : p.driver_library_version();
    if (p.driver_version_mismatch()) driver += " MISMATCH";
    table.AddRow({row.node, p.os_pretty_name().empty() ? p.os_id() : p.os_pretty_name(), p.kernel_release(),
                  std::to_string(p.cpus()), FormatBytes(p.mem_available_bytes()), std::to_string(p.gpus_size()),
                  driver, cuda.empty() ? "-" : cuda, p.python_version().empty() ? "-" : p.python_version()});
  }
  return table.Render();
}

}  // namespace gpuctl::client
