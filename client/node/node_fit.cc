#include "client/node/node_fit.h"

namespace gpuctl::client {

Status CheckNodeCanRun(const BinaryRequirements& needs, const RemoteAgentState& node, const std::string& node_name) {
  std::string where = node_name + (node.os.empty() ? "" : " (" + node.os + ")");
  if (std::vector<std::string> extra = LibrariesBeyondGlibc(needs); !extra.empty()) {
    std::string list;
    for (const std::string& library : extra) list += (list.empty() ? "" : ", ") + library;
    return FailedPrecondition("this gpuctld is not a portable build: it needs " + list +
                              ", which a fresh node lacks; build the portable one (bash scripts/package.sh, or "
                              "cmake -DGPUCTL_PORTABLE=ON) and bootstrap with it");
  }
  if (node.machine != needs.machine) {
    return FailedPrecondition("cannot run gpuctld on " + where + ": the binary is for " + needs.machine +
                              " and the node is " + node.machine +
                              "; give a build for the node's architecture with --gpuctld PATH");
  }
  if (needs.glibc.major == 0) return Status::Ok();
  if (node.glibc.empty()) {
    return FailedPrecondition("cannot run gpuctld on " + where + ": it needs glibc " + needs.glibc.ToString() +
                              " or newer and the node has no glibc (getconf GNU_LIBC_VERSION gives nothing)");
  }
  Result<GlibcVersion> has = ParseGlibcVersion(node.glibc);
  if (!has.ok()) {
    return FailedPrecondition("cannot run gpuctld on " + where + ": its glibc version '" + node.glibc +
                              "' cannot be read");
  }
  if (*has < needs.glibc) {
    return FailedPrecondition("cannot run gpuctld on " + where + ": it needs glibc " + needs.glibc.ToString() +
                              " or newer and the node has glibc " + has->ToString() +
                              "; upgrade the node (Debian 12, Ubuntu 22.04, RHEL 9 or newer)");
  }
  return Status::Ok();
}

}  // namespace gpuctl::client
