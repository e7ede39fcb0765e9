// `gpuctl train ... --multinode`: one job whose parts run on several nodes'
// agents (multinode_plan.h). start writes the job's record here first
// (multinode_store.h), then starts every part at once; status, logs, stop
// and rm on NAME reach every part; --wait supervises: a part that fails is
// shown with its node, and the others are stopped after a grace.
#pragma once

#include <chrono>
#include <string>

#include "client/train_start_request.h"

namespace gpuctl::client {

struct CommandContext;

struct MultinodeFlags {
  std::string nodes;                 // --multinode a,b (rank order)
  std::string nproc_per_node = "1";
  int rdzv_port = 29400;
  std::string rdzv_host;             // empty: the first node's address
  std::string torchrun = "torchrun";
  bool wait = false;
  std::string grace = "30s";         // --wait: after a part fails, before the others are stopped
};

void RunMultinodeStart(CommandContext& context, const TrainStartFlags& flags, const MultinodeFlags& multinode);

// True when NAME is a multi-node job started from here and no --node,
// --nodes or --agent points elsewhere, or when the file of multi-node jobs
// cannot be read: then these handle it (and say why).
bool IsMultinodeJob(CommandContext& context, const std::string& name);
void RunMultinodeStatus(CommandContext& context, const std::string& name);
// Every part's log, each line prefixed "[NODE] "; with follow, interleaved
// as the lines come, until every part has ended.
void RunMultinodeLogs(CommandContext& context, const std::string& name, bool follow);
void RunMultinodeStop(CommandContext& context, const std::string& name, std::chrono::milliseconds grace);
void RunMultinodeRemove(CommandContext& context, const std::string& name);

}  // namespace gpuctl::client
