// `gpuctl train logs -f`: copy a job's log to the caller and, when the agent
// goes away (restart, dropped connection), keep retrying and resume at the
// first byte not yet written, so nothing is lost or repeated.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "gpuctl/v1/jobs.pb.h"

namespace gpuctl::client {

// What the copy needs from outside: the agent and the clock. Tests pass fakes.
struct LogStreamSeams {
  using ChunkSink = std::function<bool(const v1::LogChunk&)>;
  // One StreamLogs call (AgentClient::StreamLogs): Ok at the end of the stream
  // or when the sink returned false.
  std::function<Status(const v1::StreamLogsRequest&, const ChunkSink&)> stream;
  // Does the agent answer and know the job? (AgentClient::GetJob)
  std::function<Status()> probe;
  std::function<void(std::chrono::milliseconds)> sleep;
  std::function<std::chrono::steady_clock::time_point()> now;
  // Reads a range the agent named (LogChunk.local) from the file on this
  // host, each piece to `sink` with its offset (false: stop, then Ok);
  // LocalLogReader::Read. Unset: every byte comes through the stream.
  using PieceSink = std::function<bool(uint64_t offset, std::string_view bytes)>;
  std::function<Status(const v1::LocalLogRange&, uint64_t offset, const PieceSink&)> read_local;
};

struct LogStreamOptions {
  v1::StreamLogsRequest request;
  // -f: reconnect after kUnavailable. Before the first stream the agent is
  // probed once, so an address with nobody there fails at once (exit 3)
  // instead of retrying.
  bool reconnect = false;
  std::string agent_address;  // for the note
  std::chrono::milliseconds retry_every{500};
  std::chrono::milliseconds give_up_after{120'000};
};

// With request.local_boot_id and seams.read_local, ranges the agent names are
// read from the file here; when one cannot be (see LocalLogReader), the stream
// is asked again from the first byte not yet written without local_boot_id,
// and every byte after comes through it.
// Hands each new byte range to `write` (false: stop, e.g. stdout closed) and
// each line for stderr to `note` (reconnecting, bytes never received, a log
// truncated under the stream: then the bytes go on from its new start; a
// queued job). Across attempts (request.across_attempts), a separator line
// goes to `write` where the next attempt's log begins, and a resumed stream
// asks for the attempt it was in. Returns Ok when the stream ended (with
// follow: the job ended and all was sent) or `write` stopped it; else the
// error, kUnavailable after give_up_after of failed reconnects.
Status StreamLogResuming(const LogStreamOptions& options, const LogStreamSeams& seams,
                         const std::function<bool(std::string_view)>& write,
                         const std::function<void(const std::string&)>& note);

}  // namespace gpuctl::client
