#include "client/node/agent_over_ssh.h"

#include "client/ssh/shell_quote.h"
#include "client/ssh/socket_tunnel.h"
#include "client/ssh/ssh_session.h"

namespace gpuctl::client {

Result<std::unique_ptr<AgentClient>> AgentClientOverSsh(std::shared_ptr<ssh::SshSession> session,
                                                        const std::string& remote_socket,
                                                        std::chrono::milliseconds call_timeout,
                                                        const std::string& remote_gpuctld) {
  std::string bridge =
      remote_gpuctld.empty() ? "" : ssh::ShellQuote(remote_gpuctld) + " --bridge " + ssh::ShellQuote(remote_socket);
  Result<std::unique_ptr<ssh::SocketTunnel>> tunnel =
      ssh::SocketTunnel::Start(std::move(session), remote_socket, bridge);
  if (!tunnel.ok()) return tunnel.status();
  auto client = std::make_unique<AgentClient>((*tunnel)->address(), call_timeout);
  client->KeepAlive(std::shared_ptr<ssh::SocketTunnel>(std::move(*tunnel)));
  return client;
}

}  // namespace gpuctl::client
