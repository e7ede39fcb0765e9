// Where to connect and how to judge the other side: plain structs, filled by
// the caller (a Node from nodes.json, tests), defaults resolved in the session.
#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace gpuctl::client::ssh {

struct SshTarget {
  std::string user;           // empty: from the ssh config, else the local user
  std::string host;           // address or a Host alias of the ssh config
  std::optional<int> port;    // empty: from the ssh config, else 22
  std::string identity_file;  // empty: ssh-agent, then the config's and default keys
};

struct SshOptions {
  // Directory holding config, known_hosts and the default keys. Empty:
  // $HOME/.ssh. libssh itself would look the home up in the password
  // database, so tests (and users with HOME elsewhere) set it through here.
  std::string ssh_dir;
  // Override the files inside ssh_dir (empty: ssh_dir/config, ssh_dir/known_hosts).
  std::string config_file;
  std::string known_hosts_file;
  // The system-wide list; empty keeps libssh's /etc/ssh/ssh_known_hosts.
  std::string global_known_hosts_file;
  // Record an unknown host key instead of refusing it. A changed key is
  // refused regardless.
  bool accept_new_host_key = false;
  std::chrono::seconds connect_timeout{10};
};

// "user@host:port" for messages.
std::string DescribeTarget(const SshTarget& target);

}  // namespace gpuctl::client::ssh
