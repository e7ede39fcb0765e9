#include "agents/events/event_log.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <string>

#include <spdlog/spdlog.h>

namespace gpuctl::events {
namespace {

int64_t UnixMs(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

// The first seq a reader after `after_seq` gets, given the oldest one kept.
uint64_t FirstSeqAfter(uint64_t after_seq, uint64_t oldest) {
  if (after_seq == std::numeric_limits<uint64_t>::max()) return after_seq;
  return std::max(after_seq + 1, oldest);
}

}  // namespace

std::optional<AgentEvent> EventSubscription::Next() { return log_.NextFor(*this); }

bool EventSubscription::ended() const {
  std::lock_guard lock(log_.mutex_);
  return ended_;
}

EventLog::EventLog(const sys::Clock& clock, size_t capacity, std::unique_ptr<EventJournal> journal)
    : clock_(clock), capacity_(std::max<size_t>(capacity, 1)), journal_(std::move(journal)) {
  ring_.resize(capacity_);
  if (!journal_) return;
  // Continue where the last run stopped: its newest events, and the seq
  // after them. Each lands where Publish would have put it.
  for (AgentEvent& e : journal_->LoadRecent(capacity_)) {
    if (e.seq != next_seq_) kept_ = 0;  // a gap: the ring starts at this one
    next_seq_ = e.seq + 1;
    kept_ = std::min(kept_ + 1, capacity_);
    ring_[(e.seq - 1) % capacity_] = std::move(e);
  }
}

uint64_t EventLog::Publish(AgentEvent event) {
  if (event.fields.is_null()) event.fields = nlohmann::json::object();
  std::vector<std::shared_ptr<EventSubscription>> to_wake;
  uint64_t seq = 0;
  {
    std::lock_guard lock(mutex_);
    // Stamped under the lock so that clock-stamped events are in seq order.
    if (event.time_unix_ms == 0) event.time_unix_ms = UnixMs(clock_.WallNow());
    seq = next_seq_++;
    event.seq = seq;
    if (journal_) {
      if (Status s = journal_->Append(event); !s.ok()) {
        spdlog::warn("event {} is kept in memory only: {}", seq, s.message());
      }
    }
    ring_[(seq - 1) % capacity_] = std::move(event);
    kept_ = std::min(kept_ + 1, capacity_);
    for (const std::shared_ptr<EventSubscription>& s : subscriptions_) {
      if (!s->armed_) continue;
      s->armed_ = false;
      to_wake.push_back(s);
    }
  }
  for (const std::shared_ptr<EventSubscription>& s : to_wake) Wake(*s);
  return seq;
}

std::vector<AgentEvent> EventLog::Since(uint64_t after_seq) const {
  std::lock_guard lock(mutex_);
  std::vector<AgentEvent> out;
  for (uint64_t seq = FirstSeqAfter(after_seq, OldestSeqLocked()); seq < next_seq_; ++seq) {
    out.push_back(AtLocked(seq));
  }
  return out;
}

uint64_t EventLog::last_seq() const {
  std::lock_guard lock(mutex_);
  return next_seq_ - 1;
}

std::shared_ptr<EventSubscription> EventLog::Subscribe(uint64_t after_seq, std::function<void()> wakeup) {
  std::lock_guard lock(mutex_);
  // The constructor is private to this class: no make_shared.
  std::shared_ptr<EventSubscription> subscription(
      new EventSubscription(*this, FirstSeqAfter(after_seq, OldestSeqLocked()), std::move(wakeup)));
  if (ended_) {
    subscription->ended_ = true;
  } else {
    subscriptions_.push_back(subscription);
  }
  return subscription;
}

void EventLog::Unsubscribe(const std::shared_ptr<EventSubscription>& subscription) {
  if (!subscription) return;
  {
    std::lock_guard lock(mutex_);
    std::erase(subscriptions_, subscription);
    subscription->ended_ = true;
    subscription->armed_ = false;
  }
  // Waits for a wakeup that a Publish started before the erase.
  std::lock_guard wake_lock(subscription->wakeup_mutex_);
  subscription->wakeup_enabled_ = false;
  subscription->wakeup_ = nullptr;
}

void EventLog::EndSubscriptions() {
  std::vector<std::shared_ptr<EventSubscription>> to_wake;
  {
    std::lock_guard lock(mutex_);
    ended_ = true;
    to_wake.swap(subscriptions_);
    for (const std::shared_ptr<EventSubscription>& s : to_wake) {
      s->ended_ = true;
      s->armed_ = false;
    }
  }
  for (const std::shared_ptr<EventSubscription>& s : to_wake) Wake(*s);
}

size_t EventLog::subscriber_count() const {
  std::lock_guard lock(mutex_);
  return subscriptions_.size();
}

std::optional<AgentEvent> EventLog::NextFor(EventSubscription& subscription) {
  std::lock_guard lock(mutex_);
  if (subscription.ended_) return std::nullopt;
  const uint64_t oldest = OldestSeqLocked();
  if (subscription.next_seq_ < oldest) {
    const uint64_t first = subscription.next_seq_;
    const uint64_t count = oldest - first;
    subscription.next_seq_ = oldest;
    AgentEvent dropped;
    dropped.time_unix_ms = UnixMs(clock_.WallNow());
    dropped.kind = kEventsDroppedKind;
    dropped.message = std::to_string(count) + (count == 1 ? " event was" : " events were") +
                      " dropped: this reader fell behind (seq " + std::to_string(first) + ".." +
                      std::to_string(oldest - 1) + ")";
    dropped.fields = {{"count", count}, {"first_seq", first}, {"last_seq", oldest - 1}};
    return dropped;
  }
  if (subscription.next_seq_ < next_seq_) return AtLocked(subscription.next_seq_++);
  subscription.armed_ = true;
  return std::nullopt;
}

void EventLog::Wake(EventSubscription& subscription) {
  std::lock_guard lock(subscription.wakeup_mutex_);
  if (subscription.wakeup_enabled_ && subscription.wakeup_) subscription.wakeup_();
}

}  // namespace gpuctl::events
