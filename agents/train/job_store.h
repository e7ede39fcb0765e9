// Job records on disk: STATE_DIR/jobs/NAME/{job.json, output.log, exit_status}.
// Writes are atomic (temp file + rename), so a crash of the agent at any
// moment leaves the old record or the new one, never a torn one.
#pragma once

#include <string>
#include <vector>

#include "agents/train/job_record.h"
#include "common/status.h"

namespace gpuctl::train {

class JobStore {
 public:
  explicit JobStore(std::string state_dir);

  std::string JobDir(const std::string& name) const;
  std::string LogPath(const std::string& name) const;   // JobDir/output.log
  std::string ExitPath(const std::string& name) const;  // JobDir/exit_status

  // Creates JobDir (0700). Errors from the filesystem, with the path.
  Status Prepare(const std::string& name) const;
  Status Save(const JobRecord& record) const;
  // kNotFound when there is no such job.
  Result<JobRecord> Load(const std::string& name) const;
  // Every readable record; unreadable ones are logged and skipped so one bad
  // file does not hide the other jobs.
  std::vector<JobRecord> LoadAll() const;

 private:
  std::string jobs_dir_;
};

}  // namespace gpuctl::train
