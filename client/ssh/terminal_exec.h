// Handing the terminal to another program: `gpuctl train attach` becomes
// tmux (or ssh -t to a node's tmux), so the user's keys and the screen go
// straight to it, with nothing of gpuctl left in between.
#pragma once

#include <string>
#include <vector>

#include "client/ssh/ssh_target.h"
#include "common/status.h"

namespace gpuctl::client::ssh {

// The argv of OpenSSH's client running `remote_argv` on `target` with a
// terminal: ssh -t [-p PORT] [-i KEY] [-o StrictHostKeyChecking=accept-new]
// -- [USER@]HOST 'WORD' 'WORD'... (the words quoted for the remote shell).
std::vector<std::string> SshTerminalArgv(const SshTarget& target, bool accept_new_host_key,
                                         const std::vector<std::string>& remote_argv);

// Replaces this process with argv[0] (found on PATH) and its arguments.
// Returns only on failure: kNotFound (not on PATH), kIo otherwise.
Status ExecReplacingProcess(const std::vector<std::string>& argv);

}  // namespace gpuctl::client::ssh
