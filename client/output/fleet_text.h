// The fleet's tables: one table for many nodes, NODE first, and a node that
// did not answer as a row with its error (`--nodes`, `gpuctl top`).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpuctl/v1/health.pb.h"
#include "gpuctl/v1/jobs.pb.h"
#include "gpuctl/v1/probe.pb.h"

namespace gpuctl::client {

// One node's part of a fleet table: its answer, or the error in its place.
template <typename Answer>
struct NodeRow {
  std::string node;
  const Answer* answer = nullptr;  // null: `error` says why
  std::string error;
};

// "12.3 GiB" free memory and "0.12%/0.00%" PSI (some/full avg10) or "-".
std::string HostMemoryText(const v1::HostHealth& host);
std::string HostPressureText(const v1::HostHealth& host);

// NODE MEM FREE PSI 10S GPU NAME MEMORY UTIL TEMP POWER: a row per GPU (one
// with GPU "-" for a node without).
std::string FleetHealthToText(const std::vector<NodeRow<v1::HealthSnapshot>>& rows);
// NODE and then `train list`'s columns, a row per job.
std::string FleetJobsToText(const std::vector<NodeRow<v1::ListJobsResponse>>& rows, int64_t now_unix_ms);
// NODE and `train status NAME`'s essentials: the job on each node.
std::string FleetJobToText(const std::vector<NodeRow<v1::Job>>& rows, int64_t now_unix_ms);
// NODE OS KERNEL CPUS MEMORY GPUS DRIVER CUDA PYTHON.
std::string FleetProbeToText(const std::vector<NodeRow<v1::HostProbe>>& rows);
// The first line of an error, for a table cell or a line of its own: escaped
// for the terminal (EscapeForTerminal), since a node's error may quote
// anything the node said.
std::string FirstLine(const std::string& message);

}  // namespace gpuctl::client
