#include "agents/train/job_owner_loop.h"

#include <algorithm>

namespace gpuctl::train {

struct JobOwnerLoop::Call {
  enum class Phase { kQueued, kRunning, kDone, kWithdrawn };
  explicit Call(std::function<void()> w) : work(std::move(w)) {}
  std::function<void()> work;
  std::mutex mutex;
  std::condition_variable done;
  Phase phase = Phase::kQueued;
};

JobOwnerLoop::JobOwnerLoop(JobTable& table, const JobParts& parts, const sys::Clock& clock)
    : table_(table), parts_(parts), clock_(clock) {}

JobOwnerLoop::~JobOwnerLoop() { Shutdown(); }

void JobOwnerLoop::Start() {
  for (JobPart* part : parts_.all()) part->OnStart(table_);  // before the owner thread: this thread owns
  std::lock_guard lock(queue_mutex_);
  if (stopping_) return;
  running_ = true;
  owner_ = std::thread([this] { Run(); });
}

void JobOwnerLoop::Shutdown() {
  std::deque<std::shared_ptr<Call>> left;
  {
    std::lock_guard lock(queue_mutex_);
    stopping_ = true;
    left.swap(queue_);
  }
  queue_wake_.notify_all();
  if (owner_.joinable()) owner_.join();
  for (const std::shared_ptr<Call>& call : left) {
    std::lock_guard lock(call->mutex);
    call->phase = Call::Phase::kWithdrawn;
    call->done.notify_all();
  }
}

bool JobOwnerLoop::RunOnOwner(std::function<void()> work, std::chrono::milliseconds queue_deadline) {
  auto call = std::make_shared<Call>(std::move(work));
  {
    std::lock_guard lock(queue_mutex_);
    if (stopping_) return false;
    if (!running_) {
      call->work();
      return true;
    }
    queue_.push_back(call);
  }
  queue_wake_.notify_one();
  std::unique_lock lock(call->mutex);
  clock_.WaitUntil(lock, call->done, clock_.SteadyNow() + queue_deadline,
                   [&] { return call->phase != Call::Phase::kQueued; });
  if (call->phase == Call::Phase::kQueued) {
    call->phase = Call::Phase::kWithdrawn;  // the owner skips it
    return false;
  }
  call->done.wait(lock, [&] { return call->phase == Call::Phase::kDone || call->phase == Call::Phase::kWithdrawn; });
  return call->phase == Call::Phase::kDone;
}

JobPart::TimePoint JobOwnerLoop::NextWake(JobPart::TimePoint now) const {
  JobPart::TimePoint wake = JobPart::TimePoint::max();
  for (const JobPart* part : parts_.all()) wake = std::min(wake, part->NextWake(table_, now));
  return wake;
}

bool JobOwnerLoop::Busy() const {
  return std::any_of(parts_.all().begin(), parts_.all().end(), [](const JobPart* p) { return p->Busy(); });
}

void JobOwnerLoop::Run() {
  std::unique_lock lock(queue_mutex_);
  while (!stopping_) {
    if (queue_.empty() && !Busy()) {
      clock_.WaitUntil(lock, queue_wake_, NextWake(clock_.SteadyNow()), [&] { return stopping_ || !queue_.empty(); });
    }
    if (stopping_) break;
    std::deque<std::shared_ptr<Call>> calls;
    calls.swap(queue_);
    lock.unlock();
    for (const std::shared_ptr<Call>& call : calls) {
      {
        std::lock_guard call_lock(call->mutex);
        if (call->phase != Call::Phase::kQueued) continue;  // withdrawn
        call->phase = Call::Phase::kRunning;
      }
      call->work();
      std::lock_guard call_lock(call->mutex);
      call->phase = Call::Phase::kDone;
      call->done.notify_all();
    }
    const auto now = clock_.SteadyNow();
    for (JobPart* part : parts_.all()) part->Tick(table_, now);
    lock.lock();
  }
}

}  // namespace gpuctl::train
