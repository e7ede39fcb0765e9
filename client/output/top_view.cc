#include "client/output/top_view.h"

#include <chrono>

#include "client/output/fleet_text.h"
#include "client/output/health_json.h"
#include "client/output/job_json.h"
#include "client/output/job_state.h"
#include "client/output/job_text.h"
#include "client/output/table.h"
#include "common/units.h"

namespace gpuctl::client {
namespace {

std::string GpuMemory(const v1::Job& job) {
  if (job.gpu_memory_size() == 0) return "-";
  uint64_t used = 0;
  for (const v1::JobGpuMemory& gpu : job.gpu_memory()) used += gpu.used_bytes();
  return FormatBytes(used);
}

std::string JobsTable(const std::vector<TopNode>& nodes, int64_t now) {
  Table table({"NODE", "JOB", "STATE", "STEP", "LOSS", "THROUGHPUT", "GPU MEM", "LAST EVENT"});
  size_t jobs = 0;
  std::string unread;  // nodes whose jobs could not be read: never "no jobs"
  for (const TopNode& node : nodes) {
    if (!node.jobs) {
      // The error may quote the node: its first line, escaped (FirstLine).
      if (node.reached && !node.error.empty()) {
        unread += "jobs of " + node.node + " could not be read: " + FirstLine(node.error) + "\n";
      }
      continue;
    }
    for (const v1::Job& job : node.jobs->jobs()) {
      const v1::JobMetrics& m = job.metrics();
      table.AddRow({node.node, job.spec().name(), JobStateSummary(job), m.has_step() ? std::to_string(m.step()) : "-",
                    m.has_loss() ? FormatLoss(m.loss()) : "-",
                    m.has_throughput() ? FormatThroughput(m.throughput()) : "-", GpuMemory(job),
                    LastEventText(job, now)});
      ++jobs;
    }
  }
  if (jobs == 0) return unread.empty() ? "no jobs\n" : unread;
  return table.Render() + unread;
}

}  // namespace

std::string LastEventText(const v1::Job& job, int64_t now_unix_ms) {
  if (job.events_size() == 0) return "-";
  const v1::JobEvent& last = job.events(job.events_size() - 1);
  if (last.time_unix_ms() <= 0) return last.kind();
  auto age = std::chrono::milliseconds(std::max<int64_t>(0, now_unix_ms - last.time_unix_ms()));
  return last.kind() + " " + FormatDuration(age) + " ago";
}

std::string TopToText(const std::vector<TopNode>& nodes, int64_t now_unix_ms) {
  size_t unreached = 0;
  std::vector<NodeRow<v1::HealthSnapshot>> rows;
  for (const TopNode& node : nodes) {
    if (!node.reached) ++unreached;
    rows.push_back({node.node, node.health ? &*node.health : nullptr, node.error});
  }
  std::string header = "gpuctl top: " + std::to_string(nodes.size()) + (nodes.size() == 1 ? " node" : " nodes");
  if (unreached > 0) header += ", " + std::to_string(unreached) + " not reached";
  return header + "\n\n" + FleetHealthToText(rows) + "\n" + JobsTable(nodes, now_unix_ms);
}

nlohmann::json TopToJson(const std::vector<TopNode>& nodes, int64_t now_unix_ms) {
  nlohmann::json list = nlohmann::json::array();
  for (const TopNode& node : nodes) {
    nlohmann::json jobs = node.jobs ? JobListToJson(*node.jobs, now_unix_ms).at("jobs") : nlohmann::json::array();
    list.push_back({{"node", node.node},
                    {"reached", node.reached},
                    {"error", node.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(node.error)},
                    {"health", node.health ? HealthToJson(*node.health) : nlohmann::json(nullptr)},
                    {"jobs", jobs}});
  }
  return {{"time_unix_ms", now_unix_ms}, {"nodes", list}};
}

std::string RepaintScreen(const std::string& screen) {
  std::string painted = "\033[H";
  for (size_t start = 0; start < screen.size();) {
    size_t end = screen.find('\n', start);
    if (end == std::string::npos) end = screen.size();
    painted += screen.substr(start, end - start) + "\033[K\n";
    start = end + 1;
  }
  return painted + "\033[J";
}

}  // namespace gpuctl::client
