// The owner loop (as oomd's engine thread and systemd-oomd's loop): one
// thread runs the calls posted to it and, on every pass, the registered
// parts (job_part.h), then sleeps until a call comes or the earliest part
// needs it. Callers wait for their call, never longer than its deadline in
// the queue; only the queue has a lock, held to push or swap.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "agents/sys/clock.h"
#include "agents/train/job_part.h"
#include "agents/train/job_table.h"

namespace gpuctl::train {

class JobOwnerLoop {
 public:
  JobOwnerLoop(JobTable& table, const JobParts& parts, const sys::Clock& clock);
  ~JobOwnerLoop();
  JobOwnerLoop(const JobOwnerLoop&) = delete;
  JobOwnerLoop& operator=(const JobOwnerLoop&) = delete;

  // Each part's OnStart on this thread, then the owner thread. Nothing
  // after a Shutdown.
  void Start();
  // Stops the owner thread after the call it is running; calls still
  // queued are withdrawn. Idempotent.
  void Shutdown();

  // Runs `work` on the owner thread and waits until it ran. A call still
  // queued at `queue_deadline` is withdrawn: false, it never ran (a call
  // that began is always waited for, so a caller never answers "failed"
  // for a start that happened). False too while the loop stops. Before
  // Start the caller is the only one touching the table: it runs at once.
  bool RunOnOwner(std::function<void()> work, std::chrono::milliseconds queue_deadline);

 private:
  struct Call;
  void Run();
  JobPart::TimePoint NextWake(JobPart::TimePoint now) const;
  bool Busy() const;

  JobTable& table_;
  const JobParts& parts_;
  const sys::Clock& clock_;

  std::mutex queue_mutex_;
  std::condition_variable queue_wake_;
  std::deque<std::shared_ptr<Call>> queue_;
  bool stopping_ = false;
  bool running_ = false;
  std::thread owner_;
};

}  // namespace gpuctl::train
