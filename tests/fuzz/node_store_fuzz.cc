// The client's nodes file ($XDG_CONFIG_HOME/gpuctl/nodes.json), which a user
// may edit by hand: ParseNodesFile over any text, and ParseNodeTarget (what
// `gpuctl node add --host` takes) over each line.
// Invariants: nodes read from a file are written back as a file that reads
// the same nodes (NodeStore::Add rewrites the whole list).
#include "agents/sys/text_fields.h"
#include "client/node/node_store.h"
#include "tests/fuzz/fuzz_check.h"

using namespace gpuctl;
using namespace gpuctl::client;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = fuzz::AsText(data, size);
  for (std::string_view line : sys::Lines(text)) {
    if (Result<Node> node = ParseNodeTarget("n", std::string(line)); node.ok()) {
      FUZZ_CHECK(!node->host.empty());
    }
  }
  Result<std::vector<Node>> nodes = ParseNodesFile(text, "nodes.json");
  if (!nodes.ok()) return 0;
  Result<std::vector<Node>> again = ParseNodesFile(FormatNodesFile(*nodes), "nodes.json");
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(*again == *nodes);
  return 0;
}
