// One training job across nodes: each node's agent runs one part, and each
// part is torchrun with the c10d rendezvous (torch.distributed's own), so
// the ranks find each other through the first node's address:
//   torchrun --nnodes K --node-rank i --nproc-per-node N --rdzv-backend c10d
//            --rdzv-endpoint FIRST:PORT --rdzv-id ID --rdzv-conf is_host=0|1
//            --local-addr NODE SCRIPT ARGS
// Pure: which requests go to which node, tested without agents.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "client/node/node_store.h"
#include "common/status.h"
#include "gpuctl/v1/jobs.pb.h"

namespace gpuctl::client {

struct MultinodeOptions {
  std::vector<Node> nodes;  // in rank order; at least two, each once
  uint32_t nproc_per_node = 1;
  int rdzv_port = 29400;
  std::string rdzv_host;    // empty: the first node's address
  std::string rdzv_id;      // the run's id: the same for every part
  std::string torchrun = "torchrun";
};

struct MultinodePart {
  std::string node;
  uint32_t rank = 0;
  v1::StartJobRequest request;
};

// The parts: `base` (the job as `train start` would send it, its command
// the training script and its arguments) with the command wrapped in
// torchrun for each rank and GPUCTL_MULTINODE_{ID,NODES,RANK} in the
// environment. Errors: kInvalidArgument (fewer than two nodes, a node
// twice, no command, --script, a bad port or process count).
Result<std::vector<MultinodePart>> PlanMultinode(const v1::StartJobRequest& base, const MultinodeOptions& options);

// Part `part`'s spec with the change the agent's relaunch made to another
// part (`relaunched`: an OOM remediation, a hang's or a failure's relaunch):
// its anchors, allocator settings, the checkpoint it resumes from, and training
// script arguments (the command after torchrun's own flags, which end with
// --local-addr ADDR). The part keeps its torchrun flags (rank, address),
// environment and everything else. Errors: kInvalidArgument when a command
// is not one PlanMultinode made.
Result<v1::JobSpec> MirrorRelaunch(const v1::JobSpec& part, const v1::JobSpec& relaunched);

// "NAME-<12 hex digits>": unique per start, so a restarted job never joins
// an old round of the rendezvous.
std::string NewRdzvId(const std::string& job_name);

}  // namespace gpuctl::client
