#include "agents/events/event_log.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <set>
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

bool DecidesSomething(const std::string& kind) {
  namespace k = event_kind;
  static const std::set<std::string, std::less<>> deciding = {
      k::kGuardKill, k::kGuardNoVictim, k::kJobEnded,  k::kJobOrphaned,       k::kCudaOom,
      k::kNcclError, k::kSignal,        k::kAllocConfInvalid, k::kOomRemediation, k::kOomGaveUp,
      k::kBuildFailed, k::kBuildSummary, k::kJobHung, k::kJobRelaunched, k::kJobGaveUp,
      k::kGpuFault,  k::kGpuDrained,   k::kGpuUndrained};
  return deciding.contains(kind);
}

void EventLog::KeepAsideLocked(const AgentEvent& event) {
  if (!DecidesSomething(event.kind)) return;
  // Each kind has a share, so a stream of short jobs' job_ended cannot push
  // out the one guard_kill or OOM remediation before them.
  size_t same = 0;
  for (const AgentEvent& e : deciding_) same += e.kind == event.kind ? 1u : 0u;
  if (same >= kDecidingKeptPerKind) {
    deciding_.erase(std::find_if(deciding_.begin(), deciding_.end(),
                                 [&](const AgentEvent& e) { return e.kind == event.kind; }));
  }
  deciding_.push_back(event);
  while (deciding_.size() > kDecidingKept) deciding_.pop_front();
}

std::vector<AgentEvent> EventLog::AsideLocked(uint64_t from, uint64_t to) const {
  std::vector<AgentEvent> out;
  for (const AgentEvent& e : deciding_) {
    if (e.seq >= from && e.seq < to) out.push_back(e);
  }
  return out;
}

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
  // after them, each where Publish would have put it; and the deciding ones
  // before them, kept aside as Publish would have.
  EventJournal::Loaded loaded = journal_->LoadRecent(
      capacity_, [](const AgentEvent& e) { return DecidesSomething(e.kind); }, kDecidingKept);
  for (AgentEvent& e : loaded.older_kept) KeepAsideLocked(e);
  for (AgentEvent& e : loaded.recent) {
    if (e.seq != next_seq_) kept_ = 0;  // a gap: the ring starts at this one
    next_seq_ = e.seq + 1;
    kept_ = std::min(kept_ + 1, capacity_);
    KeepAsideLocked(e);
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
    KeepAsideLocked(event);
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
  const uint64_t oldest = OldestSeqLocked();
  std::vector<AgentEvent> out;
  if (after_seq != std::numeric_limits<uint64_t>::max()) out = AsideLocked(after_seq + 1, oldest);
  for (uint64_t seq = FirstSeqAfter(after_seq, oldest); seq < next_seq_; ++seq) {
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
  const uint64_t oldest = OldestSeqLocked();
  std::shared_ptr<EventSubscription> subscription(
      new EventSubscription(*this, FirstSeqAfter(after_seq, oldest), std::move(wakeup)));
  if (after_seq != std::numeric_limits<uint64_t>::max()) {
    for (AgentEvent& e : AsideLocked(after_seq + 1, oldest)) subscription->aside_.push_back(std::move(e));
  }
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
  if (!subscription.aside_.empty()) {
    AgentEvent next = std::move(subscription.aside_.front());
    subscription.aside_.pop_front();
    return next;
  }
  const uint64_t oldest = OldestSeqLocked();
  if (subscription.next_seq_ < oldest) {
    const uint64_t first = subscription.next_seq_;
    subscription.next_seq_ = oldest;
    // What of them decides something still comes, after the notice.
    std::vector<AgentEvent> kept = AsideLocked(first, oldest);
    const uint64_t count = oldest - first - kept.size();
    for (AgentEvent& e : kept) subscription.aside_.push_back(std::move(e));
    AgentEvent dropped;
    dropped.time_unix_ms = UnixMs(clock_.WallNow());
    dropped.kind = kEventsDroppedKind;
    dropped.message = std::to_string(count) + (count == 1 ? " event was" : " events were") +
                      " dropped: this reader fell behind (seq " + std::to_string(first) + ".." +
                      std::to_string(oldest - 1) + ")" +
                      (kept.empty() ? "" : "; the " + std::to_string(kept.size()) + " that decide something follow");
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
