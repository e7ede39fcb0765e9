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

// civetweb 1.15 (.deps/civetweb/src/civetweb.c) serves a connection on one
// worker from a fixed pool, first come first served: the master thread
// accepts every connection and queues it (accept_new_connection,
// produce_socket); a worker that takes it (consume_socket) then waits on it
// for the request's headers (get_message -> read_message, which gives up
// request_timeout_ms after the worker took it) or, for HTTPS, first for the
// handshake (sslize: SSL_accept on the non-blocking socket, retried after
// 50 ms polls for request_timeout_ms / 50 rounds). So a connection that sends
// nothing, or never its ClientHello, holds a worker for request_timeout_ms,
// and a scrape queued behind N of them on W workers waits floor(N / W)
// request timeouts: with 2 workers and 10 s, six idle connections held every
// scrape for 30 s.
//
// 1 s: a scraper sends its request, or its TLS flights, as soon as it is
// connected; a second covers a handshake over a round trip of several hundred
// ms. One that trickles its headers is dropped within 2 s (read_message waits
// a full timeout per read, then checks the total). The same timeout bounds
// each write of the response (push_inner), so a scraper must read it too.
constexpr const char* kRequestTimeoutMs = "1000";
// 32 workers: fewer than 32 idle connections never delay a scrape (a worker
// is free); N of them delay it at most floor(N / 32) s, so Prometheus' default
// 10 s scrape timeout holds against some 280 idle connections. A parked worker
// costs a thread (only the stack pages it touches are resident, also under
// mlockall's MCL_ONFAULT) and civetweb's 16 KiB request buffer.
constexpr const char* kWorkers = "32";

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
  // Keep-alive off (civetweb's default, set because it matters): a scraper's
  // kept connection would hold a worker between scrapes. No linger_timeout_ms:
  // closing a connection does not wait for the peer.
  std::vector<std::string> civet = {"listening_ports",    port,              "num_threads",       kWorkers,
                                    "request_timeout_ms", kRequestTimeoutMs, "enable_keep_alive", "no"};
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
