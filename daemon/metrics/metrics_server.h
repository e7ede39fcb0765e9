// /metrics over HTTP (prometheus-cpp's Exposer on civetweb): plain on a
// loopback address, HTTPS with client certificates anywhere else (the
// gRPC listener's --tls-cert, --tls-key and --tls-client-ca).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/exposer.h>
#include <prometheus/registry.h>

#include "common/status.h"

namespace gpuctl::daemon {

struct MetricsServerOptions {
  std::string listen;  // HOST:PORT or [IPV6]:PORT; port 0: the kernel picks
  // All three, or none (a loopback address).
  std::string tls_cert, tls_key, tls_client_ca;
  // Where the key-and-certificate file civetweb wants is written (0600).
  std::string state_dir;
};

class MetricsServer {
 public:
  using Collect = std::function<std::vector<prometheus::MetricFamily>()>;
  // Serves `collect`'s families and `registry`'s at each scrape of /metrics.
  // Errors: kInvalidArgument (a bad address), kUnavailable (cannot bind),
  // kIo (the TLS files).
  static Result<std::unique_ptr<MetricsServer>> Start(const MetricsServerOptions& options, Collect collect,
                                                       std::shared_ptr<prometheus::Registry> registry);
  ~MetricsServer();
  // "http://127.0.0.1:9400/metrics" with the port bound.
  const std::string& url() const { return url_; }

 private:
  MetricsServer() = default;
  std::shared_ptr<prometheus::Collectable> snapshot_;
  std::shared_ptr<prometheus::Registry> registry_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  std::string url_;
};

}  // namespace gpuctl::daemon
