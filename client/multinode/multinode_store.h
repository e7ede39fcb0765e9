// The multi-node jobs started from here: which nodes run NAME's parts, so
// that `train status|logs|stop|rm NAME` reach every part. Kept beside
// nodes.json ($XDG_CONFIG_HOME/gpuctl/multinode.json), written atomically;
// each part also carries GPUCTL_MULTINODE_* in its environment.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace gpuctl::client {

struct MultinodeJob {
  std::string name;
  std::vector<std::string> nodes;  // in rank order
  std::string rdzv_id;
  std::string rdzv_endpoint;
  uint32_t nproc_per_node = 1;
  int64_t started_unix_ms = 0;
  bool operator==(const MultinodeJob&) const = default;
};

// Pure: the file's text and back. Errors: kInvalidArgument naming `path`.
Result<std::vector<MultinodeJob>> ParseMultinodeFile(std::string_view text, const std::string& path);
std::string FormatMultinodeFile(const std::vector<MultinodeJob>& jobs);

class MultinodeStore {
 public:
  explicit MultinodeStore(std::string path) : path_(std::move(path)) {}
  // Errors: kNotFound when NAME is not a multi-node job started from here.
  // (Not Result<optional>: Result keeps its value in an optional itself.)
  Result<MultinodeJob> Find(const std::string& name) const;
  // Errors: kAlreadyExists for a name in use.
  Status Add(const MultinodeJob& job);
  Status Remove(const std::string& name);

 private:
  Result<std::vector<MultinodeJob>> List() const;
  std::string path_;
};

// The store beside nodes.json.
MultinodeStore DefaultMultinodeStore();

}  // namespace gpuctl::client
