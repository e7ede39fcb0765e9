// WatchHealth streams. One hub thread samples health when any subscriber is
// due and hands the snapshot to each due stream. Reactors never block: each
// holds at most one pending snapshot (a newer one replaces it), so a slow
// client costs one message of memory, not a growing queue.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "agents/sys/clock.h"
#include "common/status.h"
#include "daemon/service/stream_writer.h"
#include "gpuctl/v1/health.pb.h"

namespace gpuctl::daemon {

class HealthWatchHub;

class WatchHealthReactor final : public StreamWriter<v1::HealthSnapshot> {
 public:
  WatchHealthReactor(HealthWatchHub& hub, OpenStreams* streams) : StreamWriter(streams), hub_(hub) { Start(); }

  // Called by the hub thread, under the hub's lock: keeps the newest
  // snapshot and writes it when no write is in flight. Never finishes.
  void Deliver(const v1::HealthSnapshot& snapshot);

 private:
  Next Produce(v1::HealthSnapshot& out, grpc::Status& end) override;
  void Release() override;

  HealthWatchHub& hub_;
  std::optional<v1::HealthSnapshot> pending_;  // guarded by the stream's lock
};

class HealthWatchHub {
 public:
  using SampleFn = std::function<Result<v1::HealthSnapshot>()>;
  static constexpr std::chrono::milliseconds kMinInterval{100};
  static constexpr std::chrono::milliseconds kDefaultInterval{1000};

  HealthWatchHub(SampleFn sample, const sys::Clock& clock);
  ~HealthWatchHub();

  // Creates a stream for gRPC to own; the first snapshot goes out at once.
  // With `streams`, shutdown ends it there too.
  WatchHealthReactor* Subscribe(std::chrono::milliseconds interval, OpenStreams* streams = nullptr);
  // Idempotent; after it returns the hub never touches `reactor` again.
  void Unsubscribe(WatchHealthReactor* reactor);
  // Ends every stream with UNAVAILABLE and stops the thread. Idempotent.
  void Stop();
  size_t subscriber_count();

 private:
  struct Subscriber {
    WatchHealthReactor* reactor;
    std::chrono::milliseconds interval;
    std::chrono::steady_clock::time_point next_due;
  };
  void Loop();

  SampleFn sample_;
  const sys::Clock& clock_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<Subscriber> subscribers_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace gpuctl::daemon
