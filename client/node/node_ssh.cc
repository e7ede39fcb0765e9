#include "client/node/node_ssh.h"

#include "client/ssh/ssh_session.h"

namespace gpuctl::client {
Result<Node> FindNode(const std::string& name) { return DefaultNodeStore().Find(name); }

Result<std::shared_ptr<ssh::SshSession>> ConnectNodeSsh(const Node& node, bool accept_new_host_key,
                                                        std::chrono::seconds timeout) {
  ssh::SshTarget target{.user = node.user, .host = node.host, .port = node.port, .identity_file = node.identity_file};
  ssh::SshOptions options;
  options.accept_new_host_key = accept_new_host_key;
  options.connect_timeout = timeout;
  Result<std::unique_ptr<ssh::SshSession>> session = ssh::SshSession::Connect(target, options);
  if (!session.ok()) return session.status();
  return std::shared_ptr<ssh::SshSession>(std::move(*session));
}

}  // namespace gpuctl::client
