#include "client/fleet/fleet_commands.h"

#include <algorithm>
#include <ostream>

#include "client/commands/command_context.h"
#include "client/commands/train_subcommands.h"
#include "client/fleet/fleet.h"
#include "client/job_state_filter.h"
#include "client/output/event_json.h"
#include "client/output/event_text.h"
#include "client/output/health_json.h"
#include "client/output/job_json.h"
#include "client/output/probe_json.h"
#include "client/output/table.h"
#include "common/json_text.h"

namespace gpuctl::client {
namespace {

// Opens the fleet, asks, prints with `text` or `json`, sets the exit code.
template <typename Answer>
void AskAndPrint(CommandContext& context, const std::function<Result<Answer>(AgentClient&)>& ask,
                 const std::function<std::string(const FleetReplies<Answer>&)>& text,
                 const std::function<nlohmann::json(const Answer&)>& json) {
  Result<Fleet> fleet = OpenFleet(context);
  if (!fleet.ok()) return context.Fail(fleet.status());
  FleetReplies<Answer> replies = AskFleet<Answer>(*fleet, ask);
  if (context.global.json()) {
    PrintFleetJsonLines(context, replies.nodes, replies.status, [&](size_t i) { return json(replies.answers[i]); });
  } else {
    context.console.out << text(replies) << std::flush;
  }
  FinishFleet(context, replies.status);
}

}  // namespace

void RunFleetHealth(CommandContext& context) {
  AskAndPrint<v1::HealthSnapshot>(
      context, [](AgentClient& agent) { return agent.GetHealth(); },
      [](const FleetReplies<v1::HealthSnapshot>& r) { return FleetHealthToText(r.Rows()); },
      [](const v1::HealthSnapshot& s) { return HealthToJson(s); });
}

void RunFleetJobList(CommandContext& context, const std::set<v1::JobState>& states) {
  int64_t now = NowUnixMs();
  AskAndPrint<v1::ListJobsResponse>(
      context,
      [&states](AgentClient& agent) -> Result<v1::ListJobsResponse> {
        Result<v1::ListJobsResponse> jobs = agent.ListJobs();
        if (jobs.ok()) KeepJobsInStates(*jobs, states);
        return jobs;
      },
      [now](const FleetReplies<v1::ListJobsResponse>& r) { return FleetJobsToText(r.Rows(), now); },
      [now](const v1::ListJobsResponse& list) { return JobListToJson(list, now); });
}

void RunFleetJobStatus(CommandContext& context, const std::string& name) {
  int64_t now = NowUnixMs();
  AskAndPrint<v1::Job>(
      context, [&name](AgentClient& agent) { return agent.GetJob(name); },
      [now](const FleetReplies<v1::Job>& r) { return FleetJobToText(r.Rows(), now); },
      [now](const v1::Job& job) { return JobToJson(job, now); });
}

void RunFleetProbe(CommandContext& context, const v1::ProbeRequest& request) {
  AskAndPrint<v1::HostProbe>(
      context, [&request](AgentClient& agent) { return agent.Probe(request); },
      [](const FleetReplies<v1::HostProbe>& r) { return FleetProbeToText(r.Rows()); },
      [](const v1::HostProbe& probe) { return ProbeToJson(probe); });
}

void RunFleetEvents(CommandContext& context, uint64_t after,
                    const std::function<bool(const v1::AgentEvent&)>& keep) {
  using Events = std::vector<v1::AgentEvent>;
  Result<Fleet> fleet = OpenFleet(context);
  if (!fleet.ok()) return context.Fail(fleet.status());
  FleetReplies<Events> replies = AskFleet<Events>(*fleet, [after, &keep](AgentClient& agent) -> Result<Events> {
    v1::WatchEventsRequest request;
    request.set_after_seq(after);
    request.set_follow(false);
    Events events;
    Status s = agent.WatchEvents(request, [&events, &keep](const v1::AgentEvent& e) {
      if (!keep || keep(e)) events.push_back(e);
      return true;
    });
    if (!s.ok()) return s;
    return events;
  });
  // Merged by time across nodes; a node's own order (seq) breaks ties.
  struct Merged {
    size_t node;
    const v1::AgentEvent* event;
  };
  std::vector<Merged> merged;
  for (size_t i = 0; i < replies.nodes.size(); ++i) {
    for (const v1::AgentEvent& e : replies.answers[i]) merged.push_back({i, &e});
  }
  std::stable_sort(merged.begin(), merged.end(), [](const Merged& a, const Merged& b) {
    return a.event->time_unix_ms() < b.event->time_unix_ms();
  });
  std::ostream& out = context.console.out;
  if (context.global.json()) {
    for (const Merged& m : merged) {
      nlohmann::json line = AgentEventToJson(*m.event);
      line["node"] = replies.nodes[m.node].name;
      out << DumpJson(line, -1) << "\n";
    }
    for (size_t i = 0; i < replies.nodes.size(); ++i) {
      if (!replies.status[i].status.ok()) out << DumpJson(NodeErrorJson(replies.nodes[i].name, replies.status[i]), -1) << "\n";
    }
  } else {
    size_t width = 4;
    for (const Node& node : replies.nodes) width = std::max(width, node.name.size());
    auto pad = [width](const std::string& name) { return name + std::string(width - name.size() + 2, ' '); };
    for (const Merged& m : merged) out << pad(replies.nodes[m.node].name) << AgentEventToText(*m.event);
    for (size_t i = 0; i < replies.nodes.size(); ++i) {
      if (!replies.status[i].status.ok()) {
        out << pad(replies.nodes[i].name) << "error: " << FirstLine(replies.status[i].status.message()) << "\n";
      }
    }
  }
  out.flush();
  FinishFleet(context, replies.status);
}

}  // namespace gpuctl::client
