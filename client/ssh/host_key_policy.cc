#include "client/ssh/host_key_policy.h"

#include <libssh/libssh.h>

namespace gpuctl::client::ssh {
namespace {

// Words of the two refusals, which IsHostKeyRefusal recognises.
constexpr const char* kHostKeyChangedWords = "REMOTE HOST KEY CHANGED";
constexpr const char* kHostKeyUnknownWords = " is not known";

// "ED25519 SHA256:abc..." for the key the server offers.
std::string OfferedKey(ssh_session session) {
  ssh_key key = nullptr;
  if (ssh_get_server_publickey(session, &key) != SSH_OK) return "(no key)";
  unsigned char* hash = nullptr;
  size_t hash_len = 0;
  std::string described = std::string(ssh_key_type_to_char(ssh_key_type(key))) + " ";
  if (ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash, &hash_len) == SSH_OK) {
    char* fingerprint = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, hash_len);
    if (fingerprint) described += fingerprint;
    ssh_string_free_char(fingerprint);
    ssh_clean_pubkey_hash(&hash);
  }
  ssh_key_free(key);
  return described;
}

}  // namespace

std::string KnownHostsName(const std::string& host, int port) {
  if (port == 22) return host;
  return "[" + host + "]:" + std::to_string(port);
}

bool IsHostKeyRefusal(const Status& status) {
  if (status.code() != ErrorCode::kPermissionDenied) return false;
  const std::string& m = status.message();
  return m.find(kHostKeyChangedWords) != std::string::npos ||
         (m.find("the host key of ") != std::string::npos && m.find(kHostKeyUnknownWords) != std::string::npos);
}

Status CheckHostKey(ssh_session_struct* session, const std::string& where, const std::string& known_hosts_file,
                    bool accept_new) {
  switch (ssh_session_is_known_server(session)) {
    case SSH_KNOWN_HOSTS_OK:
      return Status::Ok();
    case SSH_KNOWN_HOSTS_CHANGED:
    case SSH_KNOWN_HOSTS_OTHER:
      return Status(ErrorCode::kPermissionDenied,
                    std::string(kHostKeyChangedWords) + " for " + where + ": it now offers " + OfferedKey(session) +
                        ", which does not match " + known_hosts_file +
                        ". This is possibly a man-in-the-middle attack; refusing to connect. If the change is "
                        "expected (the host was reinstalled), remove the old key with: ssh-keygen -R '" + where +
                        "' -f " + known_hosts_file + " and connect again with --accept-new-host-key");
    case SSH_KNOWN_HOSTS_UNKNOWN:
    case SSH_KNOWN_HOSTS_NOT_FOUND:
      if (!accept_new) {
        return Status(ErrorCode::kPermissionDenied,
                      "the host key of " + where + kHostKeyUnknownWords + " (" + OfferedKey(session) + " is not in " +
                          known_hosts_file + "); check that fingerprint, then connect once with "
                          "--accept-new-host-key to record it");
      }
      if (ssh_session_update_known_hosts(session) != SSH_OK) {
        return IoError("cannot record the host key of " + where + " in " + known_hosts_file + ": " +
                       ssh_get_error(session));
      }
      return Status::Ok();
    case SSH_KNOWN_HOSTS_ERROR:
      break;
  }
  return IoError("cannot check the host key of " + where + " against " + known_hosts_file + ": " +
                 ssh_get_error(session));
}

}  // namespace gpuctl::client::ssh
