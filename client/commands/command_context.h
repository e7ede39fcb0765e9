// What a command needs to run: the shared flags, where to write, how to reach
// the agent, and where to leave its exit code.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "client/agent_client.h"
#include "client/cli.h"
#include "client/exit_codes.h"
#include "common/status.h"

namespace gpuctl::client {

struct CommandContext {
  GlobalOptions global;
  Console& console;
  std::string env_agent;
  // The command line as given (without the program name): `train start`
  // reads the command after "--" from it verbatim.
  std::vector<std::string> args;
  int exit_code = kExitOk;

  // The agent named by --agent / $GPUCTL_AGENT / the default socket.
  Result<std::unique_ptr<AgentClient>> ConnectAgent() const;
  // Prints "gpuctl: <message>" (escaped for the terminal, line breaks kept)
  // and records the exit code the error implies.
  void Fail(const Status& status);
};

int ExitCodeFor(const Status& status);

}  // namespace gpuctl::client
