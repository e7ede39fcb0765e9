#include "client/ssh/ssh_auth.h"

#include <cstdlib>

#include <libssh/libssh.h>

namespace gpuctl::client::ssh {
namespace {

bool AgentAvailable() {
  const char* sock = std::getenv("SSH_AUTH_SOCK");
  return sock != nullptr && *sock != '\0';
}

// Authenticates with one private key file. A passphrase-protected key
// cannot be used without a prompt, so it is reported, not retried.
int TryKeyFile(ssh_session session, const std::string& path, std::string& note) {
  ssh_key key = nullptr;
  // No passphrase and no prompt callback: an encrypted key fails here.
  if (ssh_pki_import_privkey_file(path.c_str(), nullptr, nullptr, nullptr, &key) != SSH_OK) {
    note = "; cannot load " + path + " (missing, unreadable or passphrase-protected: add it to ssh-agent with ssh-add)";
    return SSH_AUTH_DENIED;
  }
  int rc = ssh_userauth_publickey(session, nullptr, key);
  ssh_key_free(key);
  return rc;
}

}  // namespace

Status Authenticate(ssh_session_struct* session, const std::string& description, const std::string& identity_file) {
  std::string tried;
  std::string note;
  if (AgentAvailable()) {
    tried = "ssh-agent";
    if (ssh_userauth_agent(session, nullptr) == SSH_AUTH_SUCCESS) return Status::Ok();
  }
  int rc = SSH_AUTH_DENIED;
  if (!identity_file.empty()) {
    tried += tried.empty() ? identity_file : ", " + identity_file;
    rc = TryKeyFile(session, identity_file, note);
  } else {
    tried += tried.empty() ? "the default keys" : ", the default keys";
    rc = ssh_userauth_publickey_auto(session, nullptr, nullptr);
  }
  if (rc == SSH_AUTH_SUCCESS) return Status::Ok();
  if (rc == SSH_AUTH_ERROR) {
    return Unavailable("SSH connection to " + description + " failed during authentication: " +
                       ssh_get_error(session));
  }
  return Status(ErrorCode::kPermissionDenied,
                "SSH authentication to " + description + " was refused (tried " + tried + note +
                    "); load the key into ssh-agent (ssh-add) or give the node an identity file "
                    "(gpuctl node add NAME --host ... --identity FILE). gpuctl never uses passwords.");
}

}  // namespace gpuctl::client::ssh
