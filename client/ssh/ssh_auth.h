// Public-key authentication only: ssh-agent first, then the identity file
// (or the ssh config's and the default keys). Never a password.
#pragma once

#include <string>

#include "common/status.h"

struct ssh_session_struct;

namespace gpuctl::client::ssh {

// Errors: kPermissionDenied listing what was tried and what to do.
Status Authenticate(ssh_session_struct* session, const std::string& description, const std::string& identity_file);

}  // namespace gpuctl::client::ssh
