#include "agents/train/removal_check.h"

#include "agents/train/checkpoint_relaunch.h"
#include "agents/train/oom_relaunch.h"

namespace gpuctl::train {

Status CheckRemoval(const JobRecord& record, const std::string& only_run) {
  const std::string& name = record.spec.name;
  if (!only_run.empty() && record.run_id != only_run) {
    return FailedPrecondition("job '" + name + "' is now run " + record.run_id + ", not the run " + only_run +
                              " asked for: it was started again; left as it is");
  }
  if (OomRelaunch::Pending(record) || CheckpointRelaunch::Pending(record)) {
    return FailedPrecondition("job '" + name + "' is about to be relaunched (" + record.state_reason +
                              "); wait for it (gpuctl train wait " + name + ") or stop it first: gpuctl train stop " +
                              name);
  }
  return Status::Ok();
}

}  // namespace gpuctl::train
