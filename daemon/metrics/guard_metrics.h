// The memory guard's counters for /metrics: kills, warnings, times it found
// nothing it may kill, and how long each kill took from the line crossed to
// the process dead (the guard's own reaction_ms). Fed from the guard's
// events as they are published, so they count every one, not only those the
// event ring still keeps.
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>
#include <prometheus/counter.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

namespace gpuctl::daemon {

class GuardMetrics {
 public:
  GuardMetrics();
  // Thread-safe (prometheus-cpp's counters are atomic).
  void Observe(const std::string& kind, const nlohmann::json& fields);
  std::shared_ptr<prometheus::Registry> registry() const { return registry_; }

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Counter* kills_;
  prometheus::Counter* warnings_;
  prometheus::Counter* no_victim_;
  prometheus::Histogram* reaction_;
};

}  // namespace gpuctl::daemon
