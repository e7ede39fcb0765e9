// gpuctl train logs NAME [-f] [--attempt N] [--from-offset N] [--tail LINES]
#include <charconv>
#include <cstdint>
#include <iostream>
#include <memory>
#include <ostream>

#include "agents/sys/boot_id.h"
#include "agents/sys/clock.h"
#include "agents/sys/pipe_buffer.h"
#include "client/agent_address.h"
#include "client/commands/command_context.h"
#include "client/commands/train_subcommands.h"
#include "client/local_log_reader.h"
#include "client/multinode/multinode_commands.h"
#include "client/resuming_log_stream.h"
#include "common/job_name.h"
#include "common/utf8.h"

namespace gpuctl::client {
namespace {

struct LogsFlags {
  std::string name;
  bool follow = false;
  std::string from_offset;  // parsed here: CLI11 reads "-5" as a huge unsigned
  std::string tail;
  std::string attempt;  // 0: the current run
};

// A non-negative decimal below 2^63 (offsets and line counts).
Result<uint64_t> ParseCount(const std::string& flag, const std::string& text, uint64_t max) {
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value > max) {
    return InvalidArgument(flag + " must be a whole number from 0 to " + std::to_string(max) + ", got '" + text + "'");
  }
  return value;
}

void RunLogs(CommandContext& ctx, const LogsFlags& flags, bool from_offset_given, bool tail_given,
             bool attempt_given) {
  if (Status s = ValidateJobName(flags.name); !s.ok()) return ctx.Fail(s);
  if (from_offset_given && tail_given) {
    return ctx.Fail(InvalidArgument("give --from-offset or --tail, not both"));
  }
  Result<uint64_t> from_offset = from_offset_given ? ParseCount("--from-offset", flags.from_offset, INT64_MAX) : 0;
  if (!from_offset.ok()) return ctx.Fail(from_offset.status());
  Result<uint64_t> tail = tail_given ? ParseCount("--tail", flags.tail, UINT32_MAX) : 0;
  if (!tail.ok()) return ctx.Fail(tail.status());
  Result<uint64_t> attempt = attempt_given ? ParseCount("--attempt", flags.attempt, UINT32_MAX) : 0;
  if (!attempt.ok()) return ctx.Fail(attempt.status());
  if (attempt_given && *attempt == 0) {
    return ctx.Fail(InvalidArgument("--attempt counts from 1 (the run started first); see the attempts with "
                                    "'gpuctl train status " + flags.name + "'"));
  }
  if (IsMultinodeJob(ctx, flags.name)) {
    if (from_offset_given || tail_given || attempt_given) {
      return ctx.Fail(
          InvalidArgument("--from-offset, --tail and --attempt are per part: give --node NODE for one part"));
    }
    return RunMultinodeLogs(ctx, flags.name, flags.follow);
  }
  auto agent = ctx.ConnectAgent();
  if (!agent.ok()) return ctx.Fail(agent.status());
  v1::StreamLogsRequest request;
  request.set_name(flags.name);
  request.set_from_offset(*from_offset);
  if (tail_given) request.set_tail_lines(static_cast<uint32_t>(*tail));  // 0 too: from the end
  request.set_follow(flags.follow);
  request.set_attempt(static_cast<uint32_t>(*attempt));
  // Past a relaunch into the next attempt's log; a queued job is waited for.
  request.set_across_attempts(true);
  Status s = WriteJobLog(ctx, **agent, request);
  // The job is there and the attempt is not: a bad --attempt, not an
  // unknown job.
  if (s.code() == ErrorCode::kNotFound && attempt_given && (*agent)->GetJob(flags.name).ok()) {
    s = InvalidArgument(s.message());
  }
  if (!s.ok()) ctx.Fail(s);
}

}  // namespace

Status WriteJobLog(CommandContext& ctx, AgentClient& client, const v1::StreamLogsRequest& request) {
  std::ostream& out = ctx.console.out;
  // Into a pipe (| grep, | less): a larger one keeps the log at tail's pace.
  if (&out == &std::cout) sys::GrowStdoutPipe();
  auto write = [&out](std::string_view bytes) {
    // Raw bytes, flushed at once: the log may be binary and a reader waits on it.
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    return static_cast<bool>(out);  // stop when stdout is gone (| head)
  };
  // The log itself stays raw; a note (reconnecting) may quote the agent's error.
  auto note = [&ctx](const std::string& line) { ctx.console.err << EscapeForTerminal(line) << "\n" << std::flush; };
  return StreamJobLog(client, request, write, note);
}

Status StreamJobLog(AgentClient& client, const v1::StreamLogsRequest& request,
                    const std::function<bool(std::string_view)>& write,
                    const std::function<void(const std::string&)>& note) {
  LogStreamOptions options;
  options.request = request;
  options.reconnect = request.follow();
  options.agent_address = client.address();
  const std::string name = request.name();

  LogStreamSeams seams;
  seams.stream = [&client](const v1::StreamLogsRequest& resumed, const LogStreamSeams::ChunkSink& sink) {
    return client.StreamLogs(resumed, sink);
  };
  seams.probe = [&client, &name] { return client.GetJob(name).status(); };
  seams.sleep = [](std::chrono::milliseconds d) { sys::SleepFor(sys::RealClock(), d); };
  seams.now = [] { return sys::RealClock().SteadyNow(); };
  // On the agent's host the log is read here, at tail's pace. Offered over a
  // unix socket only (a TCP agent is another host's, as a rule, and is not
  // told this one's boot id); through an SSH tunnel the boot ids differ and
  // the agent sends every byte.
  if (IsUnixSocketAddress(client.address())) options.request.set_local_boot_id(sys::BootId());
  LocalLogReader local;
  seams.read_local = [&local](const v1::LocalLogRange& range, uint64_t offset,
                              const LogStreamSeams::PieceSink& sink) { return local.Read(range, offset, sink); };
  return StreamLogResuming(options, seams, write, note);
}

void AddTrainLogsCommand(CLI::App& train, CommandContext& context) {
  auto flags = std::make_shared<LogsFlags>();
  CLI::App* cmd = train.add_subcommand("logs", "Write a job's log to stdout, optionally following it");
  cmd->footer(
      "Writes output.log byte for byte (-o json does not apply). With -f, keeps following until the job has "
      "ended for good and all was written: a relaunch (--on-oom, --on-fail, --on-hang, --on-gpu-fault recover) "
      "is followed into the next attempt's log, after a line '--- attempt N (run RUN_ID): CHANGES ---'. If the "
      "agent restarts or the connection drops, reconnects for up to 2 minutes and resumes at the next byte, so "
      "nothing is lost or repeated. If output.log is truncated meanwhile (logrotate's copytruncate), says so on "
      "stderr and goes on from its new start.\n"
      "On the agent's host it reads output.log itself, as fast as tail, where the caller may read it; "
      "elsewhere, or where it may not, the agent sends the bytes.\n"
      "A queued job has written nothing: without -f this says so on stderr (exit 0); -f waits for it to start.\n"
      "A multi-node job (train start --multinode) prints every part's lines, each prefixed [NODE], interleaved "
      "as they come; --node NODE follows one part.\n"
      "Exit 1 when the agent knows no job NAME; 2 for an --attempt the job does not have; 3 when the agent "
      "cannot be reached.");
  cmd->add_option("name", flags->name, "The job's name")->required()->type_name("NAME");
  cmd->add_flag("-f,--follow", flags->follow, "Keep writing as the job logs, until it ends");
  CLI::Option* from_offset = cmd->add_option(
      "--from-offset", flags->from_offset,
      "Start at this byte offset of output.log (e.g. where an earlier run of this command stopped)")
      ->type_name("N");
  CLI::Option* tail = cmd->add_option("--tail", flags->tail,
                                      "Start this many lines before the end; 0 starts at the end (with -f: only "
                                      "what is written from now on). Default: from the start")
                           ->type_name("LINES");
  CLI::Option* attempt =
      cmd->add_option("--attempt", flags->attempt,
                      "Write attempt N's log (1: the run started first; a relaunch makes the next); an earlier "
                      "attempt's is whole. With -f, follows on into the later attempts. Default: the current run")
          ->type_name("N");
  cmd->callback([&context, flags, from_offset, tail, attempt] {
    RunLogs(context, *flags, from_offset->count() > 0, tail->count() > 0, attempt->count() > 0);
  });
}

}  // namespace gpuctl::client
