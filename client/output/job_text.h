// The human forms of training jobs: one job in detail, a table of jobs, an
// event on one line, and the lines `train start` and `train stop` print.
// Every string from the agent (a reason, a path, an event's message) is shown
// through EscapeForTerminal: a job's output cannot drive the terminal.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpuctl/v1/jobs.pb.h"

namespace gpuctl::client {

// "label:       value" lines (state, exit, pid, runtime, command, anchors,
// alloc conf, gpus, container, step, loss, throughput, restarts, log), then
// "events:      N" and one indented JobEventToText line per event.
std::string JobToText(const v1::Job& job, int64_t now_unix_ms);

// NAME STATE PID RUNTIME STEP LOSS THROUGHPUT EVENTS; "no jobs" when empty.
std::string JobListToText(const v1::ListJobsResponse& list, int64_t now_unix_ms);
// Its header and one job's row (the fleet table puts NODE before them).
std::vector<std::string> JobListHeader();
std::vector<std::string> JobListRow(const v1::Job& job, int64_t now_unix_ms);
// "0.4213", "5123 tok/s": as the tables show them.
std::string FormatLoss(double loss);
std::string FormatThroughput(const v1::Throughput& throughput);

// "cuda_oom at offset 12345: gpu 0, tried 16.0 GiB, free 11.3 GiB of 139.8 GiB"
std::string JobEventToText(const v1::JobEvent& event);

// "started job NAME (pid P, tmux session S)" and hints to follow, inspect and
// stop it. `agent_flag` ("--agent ADDR " or "") goes into the hinted commands.
std::string JobStartedText(const v1::Job& job, const std::string& agent_flag);

// "job NAME: stopped (SIGTERM) after 1h02m" plus the reason when there is one.
std::string JobStoppedText(const v1::Job& job, int64_t now_unix_ms);
// `train start` of a name whose job has ended, said before it is replaced:
// "replacing the ended job NAME (failed 3m ago: exited 1; its log stays as
// output.log.prev)". Empty when `existing` has not ended (the start is then
// refused, or it is queued).
std::string JobReplacedText(const v1::Job& existing, int64_t now_unix_ms);

}  // namespace gpuctl::client
