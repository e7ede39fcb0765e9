#include "daemon/metrics/metrics_server.h"

#include <exception>

#include "agents/sys/files.h"
#include "daemon/config/daemon_config.h"

namespace gpuctl::daemon {
namespace {

// Built at each scrape, so nothing is kept between scrapes and a job that
// dropped out leaves no series behind.
class CallbackCollectable : public prometheus::Collectable {
 public:
  explicit CallbackCollectable(MetricsServer::Collect collect) : collect_(std::move(collect)) {}
  std::vector<prometheus::MetricFamily> Collect() const override { return collect_(); }

 private:
  MetricsServer::Collect collect_;
};

}  // namespace

Result<std::unique_ptr<MetricsServer>> MetricsServer::Start(const MetricsServerOptions& options, Collect collect,
                                                            std::shared_ptr<prometheus::Registry> registry) {
  Result<ListenAddress> address = ParseListenAddress(options.listen);
  if (!address.ok() || address->kind != ListenAddress::Kind::kTcp) {
    return InvalidArgument("--metrics-listen " + options.listen + ": give HOST:PORT, e.g. 127.0.0.1:9400");
  }
  bool tls = !options.tls_cert.empty();
  std::string host = address->host.find(':') != std::string::npos ? "[" + address->host + "]" : address->host;
  std::string port = host + ":" + std::to_string(address->port) + (tls ? "s" : "");
  std::vector<std::string> civet = {"listening_ports", port, "num_threads", "2", "request_timeout_ms", "10000"};
  if (tls) {
    // civetweb reads the key and the certificate from one file.
    Result<std::string> key = sys::ReadWholeFile(options.tls_key);
    if (!key.ok()) return key.status().Wrap("--tls-key");
    Result<std::string> cert = sys::ReadWholeFile(options.tls_cert);
    if (!cert.ok()) return cert.status().Wrap("--tls-cert");
    std::string pem = options.state_dir + "/metrics-tls.pem";
    if (Status s = sys::WriteFileAtomic(pem, *key + "\n" + *cert, 0600); !s.ok()) return s;
    civet.insert(civet.end(), {"ssl_certificate", pem, "ssl_ca_file", options.tls_client_ca, "ssl_verify_peer", "yes",
                               "ssl_default_verify_paths", "no", "ssl_protocol_version", "4"});
  }
  auto server = std::unique_ptr<MetricsServer>(new MetricsServer());
  try {
    server->exposer_ = std::make_unique<prometheus::Exposer>(civet);
  } catch (const std::exception& e) {
    return Unavailable("--metrics-listen " + options.listen + ": cannot serve: " + e.what() +
                       " (is the port in use, or the address not this host's?)");
  }
  std::vector<int> ports = server->exposer_->GetListeningPorts();
  server->url_ = std::string(tls ? "https://" : "http://") + host + ":" +
                 std::to_string(ports.empty() ? address->port : ports.front()) + "/metrics";
  server->snapshot_ = std::make_shared<CallbackCollectable>(std::move(collect));
  server->registry_ = std::move(registry);
  server->exposer_->RegisterCollectable(server->snapshot_);
  if (server->registry_) server->exposer_->RegisterCollectable(server->registry_);
  return server;
}

MetricsServer::~MetricsServer() {
  // Stop serving before the collectables go (the Exposer holds weak pointers).
  exposer_.reset();
}

}  // namespace gpuctl::daemon
