#include "client/output/where_running_output.h"

#include "common/utf8.h"

namespace gpuctl::client {
namespace {

// The same words as sys::WhereKindName on the agent.
const char* WhereKindWord(v1::WhereKind kind) {
  switch (kind) {
    case v1::WHERE_KIND_BARE_METAL: return "bare-metal";
    case v1::WHERE_KIND_VM: return "vm";
    case v1::WHERE_KIND_DOCKER: return "docker";
    case v1::WHERE_KIND_PODMAN: return "podman";
    case v1::WHERE_KIND_LXC: return "lxc";
    case v1::WHERE_KIND_OTHER_CONTAINER: return "container";
    default: return "unknown";
  }
}

}  // namespace

std::string WhereRunningText(const v1::WhereRunning& where) {
  switch (where.kind()) {
    case v1::WHERE_KIND_BARE_METAL: return "bare metal";
    case v1::WHERE_KIND_VM:
      return where.hypervisor().empty() ? "VM" : "VM (" + EscapeForTerminal(where.hypervisor()) + ")";
    case v1::WHERE_KIND_DOCKER: return "Docker container";
    case v1::WHERE_KIND_PODMAN: return "Podman container";
    case v1::WHERE_KIND_LXC: return "LXC guest";
    case v1::WHERE_KIND_OTHER_CONTAINER: return "container";
    default: return "";
  }
}

std::string WhereEvidenceText(const v1::WhereRunning& where) {
  std::string text;
  for (const std::string& why : where.evidence()) text += (text.empty() ? "" : "; ") + EscapeForTerminal(why);
  return text;
}

nlohmann::json WhereRunningJson(const v1::WhereRunning& where) {
  nlohmann::json evidence = nlohmann::json::array();
  for (const std::string& why : where.evidence()) evidence.push_back(why);
  return {{"kind", WhereKindWord(where.kind())},
          {"hypervisor", where.hypervisor().empty() ? nlohmann::json(nullptr) : nlohmann::json(where.hypervisor())},
          {"evidence", evidence}};
}

}  // namespace gpuctl::client
