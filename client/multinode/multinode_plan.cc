#include "client/multinode/multinode_plan.h"

#include <cstdio>
#include <random>
#include <set>

namespace gpuctl::client {

Result<std::vector<MultinodePart>> PlanMultinode(const v1::StartJobRequest& base, const MultinodeOptions& options) {
  if (options.nodes.size() < 2) return InvalidArgument("--multinode needs at least two nodes, e.g. --multinode a,b");
  std::set<std::string> seen;
  for (const Node& node : options.nodes) {
    if (!seen.insert(node.name).second) return InvalidArgument("--multinode names node '" + node.name + "' twice");
  }
  if (options.nproc_per_node < 1 || options.nproc_per_node > 1024) {
    return InvalidArgument("--nproc-per-node must be from 1 to 1024");
  }
  if (options.rdzv_port < 1 || options.rdzv_port > 65535) return InvalidArgument("--rdzv-port must be from 1 to 65535");
  if (base.spec().command_size() == 0 || !base.spec().script().empty()) {
    return InvalidArgument("--multinode runs a command under torchrun: give it after '--', e.g. -- train.py --lr 3e-4");
  }
  if (options.rdzv_id.empty()) return InvalidArgument("no rendezvous id");
  std::string host = options.rdzv_host.empty() ? options.nodes.front().host : options.rdzv_host;
  std::string endpoint = (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" +
                         std::to_string(options.rdzv_port);
  std::string names;
  for (const Node& node : options.nodes) names += (names.empty() ? "" : ",") + node.name;

  std::vector<MultinodePart> parts;
  for (uint32_t rank = 0; rank < options.nodes.size(); ++rank) {
    const Node& node = options.nodes[rank];
    MultinodePart part{node.name, rank, base};
    v1::JobSpec& spec = *part.request.mutable_spec();
    std::vector<std::string> argv = {options.torchrun,
                                      "--nnodes", std::to_string(options.nodes.size()),
                                      "--node-rank", std::to_string(rank),
                                      "--nproc-per-node", std::to_string(options.nproc_per_node),
                                      "--rdzv-backend", "c10d",
                                      "--rdzv-endpoint", endpoint,
                                      "--rdzv-id", options.rdzv_id,
                                      // The first node hosts the rendezvous store. Said
                                      // outright: torchrun's guess compares the endpoint with
                                      // what the host name resolves to, which fails where
                                      // hosts share a name or resolve it to loopback.
                                      "--rdzv-conf", rank == 0 ? "is_host=1" : "is_host=0",
                                      // The workers' address as the other nodes reach it (not
                                      // the host name, which containers often share).
                                      "--local-addr", node.host};
    argv.insert(argv.end(), base.spec().command().begin(), base.spec().command().end());
    spec.clear_command();
    for (std::string& arg : argv) spec.add_command(std::move(arg));
    (*spec.mutable_env())["GPUCTL_MULTINODE_ID"] = options.rdzv_id;
    (*spec.mutable_env())["GPUCTL_MULTINODE_NODES"] = names;
    (*spec.mutable_env())["GPUCTL_MULTINODE_RANK"] = std::to_string(rank);
    parts.push_back(std::move(part));
  }
  return parts;
}

namespace {

// Where the training script starts in a part's command: after "--local-addr ADDR".
Result<int> ScriptStart(const v1::JobSpec& spec) {
  for (int i = 0; i + 1 < spec.command_size(); ++i) {
    if (spec.command(i) == "--local-addr") return i + 2;
  }
  return InvalidArgument("job " + spec.name() + "'s command is not a multi-node part's (no --local-addr)");
}

}  // namespace

Result<v1::JobSpec> MirrorRelaunch(const v1::JobSpec& part, const v1::JobSpec& relaunched) {
  Result<int> mine = ScriptStart(part);
  if (!mine.ok()) return mine.status();
  Result<int> theirs = ScriptStart(relaunched);
  if (!theirs.ok()) return theirs.status();
  v1::JobSpec out = part;
  out.clear_command();
  for (int i = 0; i < *mine; ++i) out.add_command(part.command(i));
  for (int i = *theirs; i < relaunched.command_size(); ++i) out.add_command(relaunched.command(i));
  if (relaunched.has_anchors()) out.set_anchors(relaunched.anchors());
  else out.clear_anchors();
  out.set_alloc_conf(relaunched.alloc_conf());
  // After a hang or a failure the relaunched rank resumes from a checkpoint:
  // every rank resumes from the same one.
  out.set_resume_from(relaunched.resume_from());
  return out;
}

std::string NewRdzvId(const std::string& job_name) {
  std::random_device random;
  std::uniform_int_distribution<uint64_t> digits(0, (uint64_t{1} << 48) - 1);
  char hex[16];
  std::snprintf(hex, sizeof hex, "%012llx", static_cast<unsigned long long>(digits(random)));
  return job_name + "-" + hex;
}

}  // namespace gpuctl::client
