// Job records on disk: STATE_DIR/jobs/NAME/{job.json, output.log, exit_status},
// and STATE_DIR/spares/NAME.json, space set aside for the next record so
// that a disk a job's log filled still takes how the job ended.
// Writes are atomic and durable (temp file, fsync, rename, directory fsync),
// so a crash of the agent at any moment leaves the old record or the new
// one, never a torn one, and a record saved is a record kept.
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
  // Errors from the filesystem (ENOSPC included): the caller must not act
  // as if it were saved. A record in state kUnreadable is never written
  // (it would replace the file that could not be read).
  Status Save(const JobRecord& record) const;
  // kNotFound when there is no such job; kInvalidArgument when the file is
  // not a regular file, not JSON, not a valid record, or names another job.
  Result<JobRecord> Load(const std::string& name) const;
  // Every job directory with a job.json: its record, or for one that cannot
  // be loaded a record in state kUnreadable whose state_reason says why, so
  // one bad file neither hides the job nor the others. Directories whose
  // names are not job names are skipped (logged).
  std::vector<JobRecord> LoadAll() const;
  // Deletes the job's directory (record and logs). Links in it are removed,
  // never followed.
  Status Remove(const std::string& name) const;

 private:
  std::string SparePath(const std::string& name) const;

  std::string jobs_dir_;
  std::string spares_dir_;
};

}  // namespace gpuctl::train
