#include "daemon/metrics/guard_metrics.h"
#include "common/event_kinds.h"

namespace gpuctl::daemon {

GuardMetrics::GuardMetrics() : registry_(std::make_shared<prometheus::Registry>()) {
  kills_ = &prometheus::BuildCounter()
                .Name("gpuctl_guard_kills_total")
                .Help("Processes or jobs the memory guard killed.")
                .Register(*registry_)
                .Add({});
  warnings_ = &prometheus::BuildCounter()
                   .Name("gpuctl_guard_warnings_total")
                   .Help("Times memory crossed the guard's warning line.")
                   .Register(*registry_)
                   .Add({});
  no_victim_ = &prometheus::BuildCounter()
                    .Name("gpuctl_guard_no_victim_total")
                    .Help("Times the guard had to act but found nothing it may kill.")
                    .Register(*registry_)
                    .Add({});
  // From 1 ms (the guard's usual reaction) to 10 s (something is very wrong).
  reaction_ = &prometheus::BuildHistogram()
                   .Name("gpuctl_guard_reaction_seconds")
                   .Help("Time from memory crossing the kill line to the victim being dead.")
                   .Register(*registry_)
                   .Add({}, prometheus::Histogram::BucketBoundaries{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                                                    0.25, 0.5, 1, 2.5, 5, 10});
}

void GuardMetrics::Observe(const std::string& kind, const nlohmann::json& fields) {
  if (kind == event_kind::kGuardKill) {
    kills_->Increment();
    auto it = fields.find("reaction_ms");
    if (it != fields.end() && it->is_number()) reaction_->Observe(it->get<double>() / 1000.0);
  } else if (kind == event_kind::kGuardWarning) {
    warnings_->Increment();
  } else if (kind == event_kind::kGuardNoVictim) {
    no_victim_->Increment();
  }
}

}  // namespace gpuctl::daemon
