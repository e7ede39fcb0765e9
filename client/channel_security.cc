#include "client/channel_security.h"

#include "agents/sys/files.h"

namespace gpuctl::client {
namespace {

Result<std::string> ReadPem(const std::string& path, const std::string& flag) {
  Result<std::string> pem = sys::ReadWholeFile(path);
  if (!pem.ok()) return pem.status().Wrap(flag);
  if (pem->find("-----BEGIN ") == std::string::npos) return InvalidArgument(flag + " " + path + " is not a PEM file");
  return pem;
}

}  // namespace

bool IsTlsFileError(const Status& status) {
  // Every file error names its flag first (ReadPem); the missing-flags one
  // starts with the address.
  return !status.ok() && status.message().rfind("--tls-", 0) == 0;
}

Result<ChannelSecurity> ChannelSecurityFor(const std::string& address, const TlsFiles& tls) {
  if (address.rfind("unix:", 0) == 0) {
    return ChannelSecurity{.credentials = grpc::InsecureChannelCredentials(), .server_name = ""};
  }
  if (tls.ca.empty() || tls.cert.empty() || tls.key.empty()) {
    return InvalidArgument("agent address " + address +
                           " is TCP, which gpuctld serves only with mutual TLS: give --tls-ca, --tls-cert and "
                           "--tls-key (or $GPUCTL_TLS_CA, $GPUCTL_TLS_CERT, $GPUCTL_TLS_KEY); on the agent's own "
                           "host use its unix socket, and for other hosts gpuctl --node NAME (SSH)");
  }
  grpc::SslCredentialsOptions options;
  Result<std::string> ca = ReadPem(tls.ca, "--tls-ca");
  if (!ca.ok()) return ca.status();
  Result<std::string> cert = ReadPem(tls.cert, "--tls-cert");
  if (!cert.ok()) return cert.status();
  Result<std::string> key = ReadPem(tls.key, "--tls-key");
  if (!key.ok()) return key.status();
  options.pem_root_certs = *ca;
  options.pem_cert_chain = *cert;
  options.pem_private_key = *key;
  return ChannelSecurity{.credentials = grpc::SslCredentials(options), .server_name = tls.server_name};
}

}  // namespace gpuctl::client
