// `gpuctld --bridge SOCKET`: copies stdin to a unix socket and the socket
// to stdout, as `socat - UNIX-CONNECT:SOCKET` would. The client reaches a
// node's agent through it, over an SSH exec channel, where the SSH server
// cannot forward to a unix socket itself (libssh 0.10 refuses
// direct-streamlocal to OpenSSH 10 servers: it misreads their version), and
// a minimal node has no socat or nc to do it.
#pragma once

#include <string>

#include "common/status.h"

namespace gpuctl::sys {

// Connects to `socket_path`, writes "ready\n" to `err_fd` (the caller waits
// for it: the connection is made), then copies both ways until the socket
// closes. End of input half-closes the socket, so the agent still answers.
// Errors: kUnavailable when the socket cannot be connected to.
Status BridgeUnixSocket(const std::string& socket_path, int in_fd, int out_fd, int err_fd);
// The same over this process's stdin, stdout and stderr.
Status BridgeUnixSocketToStdio(const std::string& socket_path);

}  // namespace gpuctl::sys
