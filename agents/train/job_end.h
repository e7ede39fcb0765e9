// How a run ended, decided from what is known when its processes are gone:
// the exit status the wrapper wrote (or not, or garbage), whether a stop was
// asked, whether the guard killed it. Pure, so each case is a unit test.
#pragma once

#include <optional>
#include <string>

#include "agents/train/exit_status.h"
#include "agents/train/job_record.h"

namespace gpuctl::train {

struct JobEnd {
  JobState state = JobState::kLost;
  std::string reason;
  std::optional<int> exit_code;
  std::optional<int> term_signal;
};

// `guard_kill_reason`: set when the guard killed this run. The guard and a
// requested stop explain any exit (a 143 after a stop is "stopped").
JobEnd DecideJobEnd(const ExitStatusReading& exit, bool stop_requested,
                    const std::optional<std::string>& guard_kill_reason);

}  // namespace gpuctl::train
