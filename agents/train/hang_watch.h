// Hang detection (--on-hang): a part that watches each running training
// run for progress, and acts when none came for its budget (hang_budget.h).
//
// Progress is any of: a new step; a log line that repeats none of the last
// few (a tqdm bar in an eval loop counts, a rank's same warning again does
// not); the tree under --checkpoint-dir changing (a save that prints
// nothing); CPU time rising in the run's processes (at least a tenth of a
// core) while none of its GPUs shows the stuck-collective pattern (busy at
// low power: a kernel spinning in NCCL).
//
// On a hang the run's stacks are dumped (stack_dump.h) off the owner
// thread, then job_hung is published with what was seen, and the policy
// applies: dump keeps the run; fail stops it (ended failed, the reason
// naming the hang); recover stops it and relaunches it from its last
// complete checkpoint (checkpoint_relaunch.h). A run is reported hung once
// until it makes progress again.
#pragma once

#include <chrono>
#include <functional>
#include <future>
#include <map>
#include <optional>
#include <string>

#include "agents/sys/gpu_types.h"
#include "agents/sys/checkpoint_scan.h"
#include "agents/train/hang_budget.h"
#include "agents/train/job_part.h"
#include "agents/train/job_starter.h"
#include "agents/train/run_sampler.h"
#include "agents/train/stack_dump.h"

namespace gpuctl::train {

struct HangWatchOptions {
  std::chrono::milliseconds sample_interval{1000};
  // How often at most the checkpoint tree is walked while nothing else
  // progressed (a quarter of the budget when that is shorter, never more
  // often than the samples).
  std::chrono::milliseconds checkpoint_interval{5000};
  // The grace of a stop for a hang (a hung run rarely handles SIGTERM).
  std::chrono::milliseconds stop_grace{10'000};
  // CPU time that counts as progress: this share of one core.
  double cpu_busy_fraction = 0.10;
  long ticks_per_second = 100;
  // The stuck-collective pattern: utilisation at or above, power below
  // this share of its limit.
  uint32_t stuck_utilization_pct = 95;
  double stuck_power_fraction = 0.5;
};

class HangWatch final : public JobPart {
 public:
  // `read_gpus` may be null (no GPUs to read).
  HangWatch(RunSampler& sampler, StackDumper& dumper, JobStopper& stopper, std::function<sys::GpuReport()> read_gpus,
            HangWatchOptions options);
  ~HangWatch() override;

  void Tick(JobTable& table, TimePoint now) override;
  TimePoint NextWake(const JobTable& table, TimePoint now) const override;

  // Whether a hang's dump is still being written (its event not out yet).
  bool Dumping() const;

  // Where a dump of `record` goes: JOB_DIR/dumps/RUN_ID-UNIXMS.
  static std::string DumpDirFor(const JobTable& table, const JobRecord& record);

 private:
  struct Watch {
    TimePoint last_progress{};
    std::string last_progress_what = "started";
    std::optional<uint64_t> step;
    TimePoint last_step_at{};
    bool steps_seen = false;
    StepIntervals intervals;
    uint64_t novel_lines = 0;
    std::optional<sys::TreeSignature> checkpoint;
    TimePoint checkpoint_checked{};
    std::map<int64_t, uint64_t> cpu_ticks;  // pid -> ticks at the last sample
    std::map<int64_t, bool> cpu_still;      // pid -> its CPU time did not move last sample
    TimePoint sampled{};
    TimePoint published{};
    bool hung = false;
    // A hang's dump in flight, and what the event will say.
    std::optional<std::future<StackDump>> dump;
    nlohmann::json hang_fields;
    std::string hang_reason;
  };

  void Observe(JobTable& table, JobEntry& entry, Watch& watch, TimePoint now);
  bool GpusLookStuck(const JobRecord& record, nlohmann::json* gpus_seen) const;
  void DeclareHung(JobTable& table, JobEntry& entry, Watch& watch, TimePoint now, const HangBudget& budget);
  void FinishHang(JobTable& table, JobEntry& entry, Watch& watch, StackDump dump);

  RunSampler& sampler_;
  StackDumper& dumper_;
  JobStopper& stopper_;
  std::function<sys::GpuReport()> read_gpus_;
  const HangWatchOptions options_;
  std::map<std::string, Watch> watches_;  // by run id
};

}  // namespace gpuctl::train
