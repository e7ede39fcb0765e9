#include "client/multinode/multinode_store.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "agents/sys/files.h"
#include "agents/sys/paths.h"
#include "client/node/node_store.h"
#include "common/json_integer.h"
#include "common/json_text.h"

namespace gpuctl::client {

Result<std::vector<MultinodeJob>> ParseMultinodeFile(std::string_view text, const std::string& path) {
  try {
    std::vector<MultinodeJob> jobs;
    nlohmann::json doc = nlohmann::json::parse(text);  // kept: the loop below refers into it
    for (const nlohmann::json& j : doc.at("jobs")) {
      MultinodeJob job;
      job.name = j.at("name").get<std::string>();
      job.nodes = j.at("nodes").get<std::vector<std::string>>();
      job.rdzv_id = j.at("rdzv_id").get<std::string>();
      job.rdzv_endpoint = j.at("rdzv_endpoint").get<std::string>();
      job.nproc_per_node = JsonInteger<uint32_t>(j.at("nproc_per_node"));
      job.started_unix_ms = JsonInteger<int64_t>(j.at("started_unix_ms"));
      jobs.push_back(std::move(job));
    }
    return jobs;
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(path + " is not a gpuctl multinode file (" + e.what() + "); fix or remove it");
  }
}

std::string FormatMultinodeFile(const std::vector<MultinodeJob>& jobs) {
  nlohmann::json list = nlohmann::json::array();
  for (const MultinodeJob& job : jobs) {
    list.push_back({{"name", job.name},
                    {"nodes", job.nodes},
                    {"rdzv_id", job.rdzv_id},
                    {"rdzv_endpoint", job.rdzv_endpoint},
                    {"nproc_per_node", job.nproc_per_node},
                    {"started_unix_ms", job.started_unix_ms}});
  }
  return DumpJson(nlohmann::json{{"version", 1}, {"jobs", list}}, 2) + "\n";
}

Result<std::vector<MultinodeJob>> MultinodeStore::List() const {
  if (!sys::PathExists(path_)) return std::vector<MultinodeJob>{};
  Result<std::string> text = sys::ReadWholeFile(path_);
  if (!text.ok()) return text.status();
  return ParseMultinodeFile(*text, path_);
}

Result<MultinodeJob> MultinodeStore::Find(const std::string& name) const {
  Result<std::vector<MultinodeJob>> jobs = List();
  if (!jobs.ok()) return jobs.status();
  for (const MultinodeJob& job : *jobs) {
    if (job.name == name) return job;
  }
  return NotFound("no multi-node job named '" + name + "' in " + path_);
}

Status MultinodeStore::Add(const MultinodeJob& job) {
  Result<std::vector<MultinodeJob>> jobs = List();
  if (!jobs.ok()) return jobs.status();
  for (const MultinodeJob& old : *jobs) {
    if (old.name == job.name) {
      return Status(ErrorCode::kAlreadyExists, "multi-node job '" + job.name + "' exists (on " +
                                                   std::to_string(old.nodes.size()) +
                                                   " nodes); remove it first with: gpuctl train rm " + job.name);
    }
  }
  jobs->push_back(job);
  if (Status s = sys::EnsureDir(sys::ParentDir(path_), 0700); !s.ok()) return s;
  return sys::WriteFileAtomic(path_, FormatMultinodeFile(*jobs), 0600);
}

Status MultinodeStore::Remove(const std::string& name) {
  Result<std::vector<MultinodeJob>> jobs = List();
  if (!jobs.ok()) return jobs.status();
  std::erase_if(*jobs, [&](const MultinodeJob& job) { return job.name == name; });
  return sys::WriteFileAtomic(path_, FormatMultinodeFile(*jobs), 0600);
}

MultinodeStore DefaultMultinodeStore() {
  std::string nodes = DefaultNodeStore().path();
  return MultinodeStore(sys::JoinPath(sys::ParentDir(nodes), "multinode.json"));
}

}  // namespace gpuctl::client
