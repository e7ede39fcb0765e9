// How the client secures its channel to an agent. A unix socket needs
// nothing more: its directory and mode are the door (only root reaches the
// system agent's). TCP is served only with mutual TLS, so a TCP address
// needs the CA that signed the agent's certificate and a client certificate
// and key signed by the CA the agent trusts.
#pragma once

#include <memory>
#include <string>

#include <grpcpp/security/credentials.h>

#include "common/status.h"

namespace gpuctl::client {

// PEM file paths (--tls-ca, --tls-cert, --tls-key or $GPUCTL_TLS_*).
struct TlsFiles {
  std::string ca;
  std::string cert;
  std::string key;
  // The name to check in the agent's certificate when it is not the host
  // of the address (--tls-server-name).
  std::string server_name;
};

struct ChannelSecurity {
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  std::string server_name;  // empty: the address's host
};

// `address` as NormalizeAgentAddress returns it. Errors: kInvalidArgument
// for a TCP address without all three files (saying which flags to give),
// kNotFound / kIo for a file that cannot be read, kInvalidArgument for one
// that is not PEM.
Result<ChannelSecurity> ChannelSecurityFor(const std::string& address, const TlsFiles& tls);

// Whether `status` is ChannelSecurityFor's complaint about one of the files
// given (missing, unreadable, not PEM), not about flags left out: a local
// configuration error, exit 5.
bool IsTlsFileError(const Status& status);

}  // namespace gpuctl::client
