#include "client/commands/events_command.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <set>
#include <memory>
#include <ostream>

#include "agents/sys/clock.h"
#include "client/commands/command_context.h"
#include "client/fleet/fleet_commands.h"
#include "client/output/event_json.h"
#include "client/output/event_text.h"
#include "client/resuming_event_stream.h"
#include "common/event_kinds.h"
#include "common/job_name.h"
#include "common/json_text.h"
#include "common/utf8.h"

namespace gpuctl::client {
namespace {

struct EventsFlags {
  bool follow = false;
  uint64_t after = 0;
  std::string job;    // --job: not given, every job's and none's
  bool job_given = false;  // --job "" is refused, not read as every job
  std::string kinds;  // --kind K,...: not given, every kind
  bool kinds_given = false;  // --kind "" is refused, not read as every kind
};

// The events --job and --kind keep (the agent sends all; they are few).
Result<std::function<bool(const v1::AgentEvent&)>> EventFilter(const EventsFlags& flags) {
  std::set<std::string> kinds;
  std::string valid;
  for (const char* known : event_kind::kAllKinds) valid += (valid.empty() ? "" : ", ") + std::string(known);
  for (size_t start = 0; start <= flags.kinds.size();) {
    size_t comma = std::min(flags.kinds.find(',', start), flags.kinds.size());
    std::string kind = flags.kinds.substr(start, comma - start);
    // Spaces around a word are allowed, as --state allows them.
    kind.erase(0, std::min(kind.find_first_not_of(' '), kind.size()));
    kind.erase(kind.find_last_not_of(' ') + 1);
    start = comma + 1;
    if (kind.empty()) continue;
    // A word no event has (a typo, "oom") would keep nothing: refused, not
    // read as "none happened".
    if (std::find(std::begin(event_kind::kAllKinds), std::end(event_kind::kAllKinds), kind) ==
        std::end(event_kind::kAllKinds)) {
      return InvalidArgument("--kind: unknown kind '" + kind + "' (valid: " + valid + ")");
    }
    kinds.insert(kind);
  }
  if (flags.kinds_given && kinds.empty()) {
    return InvalidArgument("--kind needs at least one kind (valid: " + valid + ")");
  }
  if (flags.job_given) {
    if (Status s = ValidateJobName(flags.job); !s.ok()) return s.Wrap("--job");
  }
  std::string job = flags.job;
  return std::function<bool(const v1::AgentEvent&)>([job, kinds](const v1::AgentEvent& event) {
    // events_dropped is about the stream itself: a reader is told of a gap
    // whatever it filters.
    if (event.kind() == "events_dropped") return true;
    if (!job.empty() && event.job() != job) return false;
    return kinds.empty() || kinds.contains(event.kind());
  });
}

void RunEvents(CommandContext& ctx, const EventsFlags& flags) {
  Result<std::function<bool(const v1::AgentEvent&)>> keep = EventFilter(flags);
  if (!keep.ok()) return ctx.Fail(keep.status());
  if (!ctx.global.nodes.empty()) {
    if (flags.follow) return ctx.Fail(InvalidArgument("--follow with --nodes: follow one node with --node NAME"));
    return RunFleetEvents(ctx, flags.after, *keep);
  }
  auto agent = ctx.ConnectAgent();
  if (!agent.ok()) return ctx.Fail(agent.status());
  AgentClient& client = **agent;

  EventStreamOptions options;
  options.request.set_after_seq(flags.after);
  options.request.set_follow(flags.follow);
  options.reconnect = flags.follow;
  options.agent_address = client.address();

  EventStreamSeams seams;
  seams.stream = [&client](const v1::WatchEventsRequest& request, const EventStreamSeams::EventSink& sink) {
    return client.WatchEvents(request, sink);
  };
  // A WatchEvents that asks for nothing: cheap, and it tests the call we need.
  seams.probe = [&client] {
    v1::WatchEventsRequest nothing;
    nothing.set_after_seq(std::numeric_limits<uint64_t>::max());
    return client.WatchEvents(nothing, [](const v1::AgentEvent&) { return true; });
  };
  seams.sleep = [](std::chrono::milliseconds d) { sys::SleepFor(sys::RealClock(), d); };
  seams.now = [] { return sys::RealClock().SteadyNow(); };

  std::ostream& out = ctx.console.out;
  const bool json = ctx.global.format() == OutputFormat::kJson;
  auto write = [&out, json, &keep](const v1::AgentEvent& event) {
    if (!(*keep)(event)) return true;
    if (json) {
      out << DumpJson(AgentEventToJson(event), -1) << "\n";
    } else {
      out << AgentEventToText(event);
    }
    out.flush();  // a reader (| jq, | grep) waits on each event
    return static_cast<bool>(out);  // stop when stdout is gone (| head)
  };
  // A note (reconnecting, gave up) may quote the agent's error.
  auto note = [&ctx](const std::string& line) { ctx.console.err << EscapeForTerminal(line) << "\n" << std::flush; };
  Status s = WatchEventsResuming(options, seams, write, note);
  if (!s.ok()) ctx.Fail(s);
}

}  // namespace

void AddEventsCommand(CLI::App& app, CommandContext& context) {
  auto flags = std::make_shared<EventsFlags>();
  CLI::App* cmd = app.add_subcommand(
      "events", "Show the agent's events: guard kills and warnings, job events");
  cmd->footer(
      "Prints the events the agent serves (its newest 1000, and before them the newest 512 that decide something: "
      "guard kills, job ends, CUDA OOMs, remediations, failed builds; 128 of each kind at most; after an agent restart "
      "too, read back from its journal in STATE_DIR/events, where older ones stay until it rotates at 4 MiB), oldest "
      "first, one per line: local time (2026-12-05T00:39:00.175+00:00), kind, job (or -), message. -o json prints one JSON object per line: seq, time_unix_ms, kind, job (null: "
      "none), message, fields.\n"
      "Event numbers (seq) keep rising across agent restarts: the agent journals its events in "
      "STATE_DIR/events, so --after SEQ works after a restart too.\n"
      "With -f, keeps printing new events until interrupted; if the agent restarts or the connection drops, "
      "reconnects for up to 2 minutes and goes on after the last event printed, so none is shown twice or "
      "missed. A reader that falls behind gets an events_dropped event saying how many it missed.\n"
      "Exit 0 ok, 1 the agent reported an error, 3 the agent cannot be reached.");
  cmd->add_flag("-f,--follow", flags->follow, "Keep printing new events as they happen");
  cmd->add_option("--after", flags->after,
                  "Only events numbered above SEQ (the seq of the last one you saw; a SEQ past the newest is "
                  "refused, exit 2)")
      ->check(CLI::NonNegativeNumber)
      ->type_name("SEQ");
  CLI::Option* job = cmd->add_option("--job", flags->job, "Only the events of this job")->type_name("NAME");
  CLI::Option* kind =
      cmd->add_option("--kind", flags->kinds,
                      "Only events of these kinds, comma-separated, e.g. cuda_oom,job_ended (events_dropped is always "
                      "shown; an unknown kind is refused, exit 2, listing them)")
          ->type_name("KIND,...");
  cmd->callback([&context, flags, job, kind] {
    flags->job_given = job->count() > 0;
    flags->kinds_given = kind->count() > 0;
    RunEvents(context, *flags);
  });
}

}  // namespace gpuctl::client
