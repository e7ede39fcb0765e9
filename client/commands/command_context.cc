#include "client/commands/command_context.h"

#include <ostream>

#include "client/agent_address.h"
#include "client/node/node_connect.h"
#include "client/ssh/host_key_policy.h"
#include "common/utf8.h"

namespace gpuctl::client {

int ExitCodeFor(const Status& status) {
  // Found before any agent was asked: their own codes, so that a script
  // tells them from an agent's error (1) or an unreachable agent (3).
  if (IsTlsFileError(status)) return kExitLocalConfig;
  if (ssh::IsHostKeyRefusal(status)) return kExitHostKeyUntrusted;
  switch (status.code()) {
    case ErrorCode::kOk: return kExitOk;
    // The agent refused the input (a bad spec, a name in use, a stopped
    // container): nothing was done, as with a bad flag.
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kAlreadyExists:
    case ErrorCode::kFailedPrecondition:
      return kExitUsage;
    case ErrorCode::kUnavailable: return kExitUnreachable;
    default: return kExitFailure;
  }
}

Result<std::unique_ptr<AgentClient>> CommandContext::ConnectAgent() const {
  if (!global.nodes.empty()) {
    return InvalidArgument(
        "--nodes works with health, top, train list, train status, events and probe; use --node NAME for one node");
  }
  if (!global.node.empty()) {
    if (!global.agent.empty()) {
      return InvalidArgument("give either --node or --agent, not both");
    }
    return ConnectNode(*this, global.node, {});
  }
  Result<std::string> address = NormalizeAgentAddress(ChooseAgentAddress(global.agent, env_agent));
  if (!address.ok()) return address.status();
  Result<ChannelSecurity> security = ChannelSecurityFor(
      *address, {.ca = global.tls_ca, .cert = global.tls_cert, .key = global.tls_key, .server_name = global.tls_server_name});
  if (!security.ok()) return security.status();
  return std::make_unique<AgentClient>(*address, std::chrono::seconds(10), &*security);
}

void CommandContext::Fail(const Status& status) {
  // A message may quote the agent, a node or a job (a state reason, an SSH
  // banner): its lines are kept, anything a terminal would act on is escaped.
  console.err << "gpuctl: " << EscapeForTerminalKeepingLines(status.message()) << "\n";
  exit_code = ExitCodeFor(status);
}

}  // namespace gpuctl::client
