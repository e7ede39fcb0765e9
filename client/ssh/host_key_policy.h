// The host key rule, as OpenSSH's StrictHostKeyChecking=accept-new: a known
// key goes; an unknown one is refused unless the user accepts it (then it is
// recorded); a changed one is always refused, loudly.
#pragma once

#include <string>

#include "client/ssh/ssh_target.h"
#include "common/status.h"

struct ssh_session_struct;

namespace gpuctl::client::ssh {

// `where` is "host" or "[host]:port", the name known_hosts and ssh-keygen -R use.
Status CheckHostKey(ssh_session_struct* session, const std::string& where, const std::string& known_hosts_file,
                    bool accept_new);

// Whether `status` (perhaps wrapped) is CheckHostKey refusing an unknown or
// changed key: the command then exits 6, not as an unreachable node.
bool IsHostKeyRefusal(const Status& status);

// The name a host has in known_hosts: "host" on port 22, else "[host]:port".
std::string KnownHostsName(const std::string& host, int port);

}  // namespace gpuctl::client::ssh
