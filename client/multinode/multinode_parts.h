// The parts of a multi-node job as the commands see them: each node's part
// asked of every node at once, shown as one table or one JSON object.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "client/fleet/fan_out.h"
#include "client/multinode/multinode_store.h"
#include "common/status.h"
#include "gpuctl/v1/jobs.pb.h"

namespace gpuctl::client {

struct CommandContext;

// Each part's SSH connection and calls.
inline constexpr std::chrono::seconds kPartTimeout{20};

struct PartReply {
  v1::Job job;
  NodeAnswer answer;
};

// Starting, running or queued.
bool PartRunning(const v1::Job& job);
// The nodes from nodes.json, in the order given. Errors: kInvalidArgument for
// a name not there.
Result<std::vector<Node>> FindNodes(const std::vector<std::string>& names);
Result<std::unique_ptr<NodePool>> PoolFor(CommandContext& ctx, const std::vector<std::string>& names);
// GetJob(name) on every part at once.
std::vector<PartReply> GetParts(NodePool& pool, const std::string& name);
// "failed (exit 1): why" or "error: ..." for one part.
std::string PartSummary(const PartReply& part);
// NODE RANK and train list's columns, a row per part.
std::string PartsTable(const MultinodeJob& job, const std::vector<PartReply>& parts);
// {name, nodes, rdzv_endpoint, rdzv_id, nproc_per_node, parts: [{node, rank, reached, ...job}]}
nlohmann::json PartsJson(const MultinodeJob& job, const std::vector<PartReply>& parts);
// "multi-node job NAME: 2 parts on a,b, rendezvous HOST:PORT id ID\n"
std::string PartsHeader(const MultinodeJob& job);
// Stops the parts `which` marks, at once, each with `grace`.
void StopRunningParts(NodePool& pool, const std::string& name, const std::vector<bool>& which,
                      std::chrono::milliseconds grace);
// Exit 4 when some part's node could not be reached.
void FinishParts(CommandContext& ctx, const std::vector<PartReply>& parts);

}  // namespace gpuctl::client
