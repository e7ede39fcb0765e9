// The agent's recent events: a bounded ring (old events drop off, memory
// stays fixed under pressure) that streams to subscribers. A slow subscriber
// loses events (and is told how many) rather than growing a queue.
//
// A subscriber is a cursor into the ring, not a queue of its own: it reads
// the event after the last one it took. When publishers overwrite events it
// has not read yet, its next read is one synthetic "events_dropped" event
// (seq 0, fields {count, first_seq, last_seq}) and then the oldest event the
// ring still has. So the ring is every subscriber's bounded queue and a
// subscriber costs a few words, however slow it is.
//
// The ring keeps the newest events, whatever they are: a job printing
// thousands of exceptions would push out the OOM remediation or the guard
// kill before it. So the events that decide something (DecidesSomething)
// are also kept aside, the newest
// kDecidingKept of them, and given to readers in seq order wherever the
// ring no longer has them: after `events --after N`, at a subscription's
// start and after an events_dropped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "agents/events/agent_event.h"
#include "agents/events/event_journal.h"
#include "agents/sys/clock.h"
#include "common/event_kinds.h"

namespace gpuctl::events {

inline constexpr const char* kEventsDroppedKind = event_kind::kEventsDropped;

// The kinds that name an action taken or why a run ended: guard kills (and
// no victim), job ends and orphans, the log's cuda_oom,
// nccl_error, signal and alloc_conf_invalid, OOM remediations and give-ups,
// failed builds and their summaries. Not tracebacks, warnings, throttles.
bool DecidesSomething(const std::string& kind);

class EventLog;

// One reader of an EventLog, made by EventLog::Subscribe. Thread-safe.
class EventSubscription {
 public:
  // The next event for this reader: backlog first, then live events as they
  // are published; an "events_dropped" event when it fell behind the ring.
  // nullopt when nothing is waiting (the wakeup fires once the next event is
  // published) and for good once ended().
  std::optional<AgentEvent> Next();
  // True after EventLog::EndSubscriptions or Unsubscribe.
  bool ended() const;

 private:
  friend class EventLog;
  EventSubscription(EventLog& log, uint64_t next_seq, std::function<void()> wakeup)
      : log_(log), next_seq_(next_seq), wakeup_(std::move(wakeup)) {}

  EventLog& log_;
  // Guarded by log_.mutex_.
  uint64_t next_seq_;
  std::deque<AgentEvent> aside_;  // kept-aside events to give before next_seq_
  bool armed_ = false;  // Next found nothing: wake on the next Publish
  bool ended_ = false;
  // Held while wakeup_ runs, so Unsubscribe can wait out a running one.
  std::mutex wakeup_mutex_;
  bool wakeup_enabled_ = true;  // guarded by wakeup_mutex_
  std::function<void()> wakeup_;
};

class EventLog {
 public:
  static constexpr size_t kDefaultCapacity = 1000;
  static constexpr size_t kDecidingKept = 512;
  static constexpr size_t kDecidingKeptPerKind = 128;

  // `capacity` events are kept (at least 1). The log must outlive its
  // subscriptions. With a `journal`, each event is also appended to it, and
  // the log starts with the journal's newest events and the seq after them,
  // so seq keeps rising across agent restarts.
  explicit EventLog(const sys::Clock& clock, size_t capacity = kDefaultCapacity,
                    std::unique_ptr<EventJournal> journal = nullptr);
  EventLog(const EventLog&) = delete;
  EventLog& operator=(const EventLog&) = delete;

  // Assigns the next seq (1, 2, 3..., continued from the journal; any seq
  // given is replaced), stamps time_unix_ms from the clock when it is 0, keeps the
  // event (dropping the oldest when full) and wakes waiting subscribers.
  // Thread-safe; never waits on a subscriber beyond its wakeup call. Returns
  // the seq.
  uint64_t Publish(AgentEvent event);

  // Events with seq > after_seq still in the ring, oldest first.
  std::vector<AgentEvent> Since(uint64_t after_seq) const;
  // The seq of the newest event, 0 before the first.
  uint64_t last_seq() const;
  size_t capacity() const { return capacity_; }

  // A reader that starts after `after_seq` (0: with the oldest event kept;
  // events that fell off before it subscribed are not reported as dropped).
  // `wakeup` runs on the publishing thread after an event arrives for a
  // reader whose Next() came back empty: it must be quick and must not block
  // or call Unsubscribe. After EndSubscriptions, returns an ended one.
  std::shared_ptr<EventSubscription> Subscribe(uint64_t after_seq, std::function<void()> wakeup);
  // Idempotent. When it returns, the wakeup is not running and never runs
  // again, so its captures may be freed. Not from inside the wakeup.
  void Unsubscribe(const std::shared_ptr<EventSubscription>& subscription);
  // Shutdown: ends every subscription (each is woken once and reads nothing
  // more) and every later one. Publish and Since keep working. Idempotent.
  void EndSubscriptions();
  size_t subscriber_count() const;

 private:
  friend class EventSubscription;
  std::optional<AgentEvent> NextFor(EventSubscription& subscription);
  // Oldest seq still kept; last_seq + 1 when empty. Under mutex_.
  uint64_t OldestSeqLocked() const { return next_seq_ - kept_; }
  const AgentEvent& AtLocked(uint64_t seq) const { return ring_[(seq - 1) % capacity_]; }
  static void Wake(EventSubscription& subscription);
  // Keeps `event` aside when it decides something. Under mutex_.
  void KeepAsideLocked(const AgentEvent& event);
  // Kept-aside events with from <= seq < to, oldest first. Under mutex_.
  std::vector<AgentEvent> AsideLocked(uint64_t from, uint64_t to) const;

  const sys::Clock& clock_;
  const size_t capacity_;
  mutable std::mutex mutex_;
  std::vector<AgentEvent> ring_;  // capacity_ slots; seq s at (s - 1) % capacity_
  size_t kept_ = 0;               // how many of the newest seqs are in it
  uint64_t next_seq_ = 1;
  bool ended_ = false;
  std::vector<std::shared_ptr<EventSubscription>> subscriptions_;
  std::deque<AgentEvent> deciding_;  // the newest kDecidingKept deciding events, by seq
  std::unique_ptr<EventJournal> journal_;  // appended under mutex_, in seq order
};

}  // namespace gpuctl::events
