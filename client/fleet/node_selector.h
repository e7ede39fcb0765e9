// Which nodes `--nodes` names: "all", "NAME,NAME", "@KEY=VALUE" (nodes with
// that label) or "@KEY" (that label, any value), mixed freely: "a,@gpu=h200".
// Pure: the caller reads nodes.json.
#pragma once

#include <string>
#include <vector>

#include "client/node/node_store.h"
#include "common/status.h"

namespace gpuctl::client {

// The selected nodes in nodes.json's order, each once. Errors:
// kInvalidArgument (an empty part, an unknown name, a label no node
// has: nothing is asked, exit 2), kNotFound (no nodes at all), each saying
// how to fix it.
Result<std::vector<Node>> SelectNodes(const std::vector<Node>& known, const std::string& selector);

// "a,b" -> {"a", "b"}; empty parts are kept, for the caller to refuse.
std::vector<std::string> SplitNodeList(const std::string& text);

}  // namespace gpuctl::client
