// A dump of a run's stacks, the bundle a hang leaves (and `train dump`
// makes): for every process of the run a file with its command line, state,
// wchan and kernel stack, and for Python processes `py-spy dump` (run with
// --nonblocking, so a stopped or wedged process is read without being
// paused); NCCL's flight-recorder dumps, asked for through their pipes and
// copied in. Each process's innermost Python frame is kept for the
// job_hung event: ranks that wait in different places disagree.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agents/sys/clock.h"
#include "agents/sys/command_runner.h"
#include "agents/sys/host_fs.h"
#include "agents/train/job_record.h"
#include "agents/train/run_sampler.h"

namespace gpuctl::train {

struct ProcessDump {
  int64_t pid = 0;
  std::optional<int> rank;
  char state = '?';
  std::string file;       // in the dump's directory
  std::string method;     // "py-spy" or "kernel stack"
  std::string top_frame;  // "wait (threading.py:320)"; empty without py-spy
};

struct StackDump {
  std::string dir;
  std::vector<ProcessDump> processes;
  std::vector<std::string> files;  // relative to dir
  std::string error;               // the dump could not be written (dir); partial ones say why per file
};

class StackDumper {
 public:
  virtual ~StackDumper() = default;
  // Writes the bundle of `record`'s `processes` into the new directory
  // `dir`. Runs off the owner thread: it may take seconds.
  virtual StackDump Dump(const JobRecord& record, const std::vector<RunProcess>& processes,
                         const std::string& dir) = 0;
};

class ProcStackDumper final : public StackDumper {
 public:
  // `agent_path`: the PATH py-spy is looked for on after the job's venv.
  ProcStackDumper(const sys::HostFs& fs, sys::CommandRunner& runner, const sys::Clock& clock, std::string agent_path);
  StackDump Dump(const JobRecord& record, const std::vector<RunProcess>& processes, const std::string& dir) override;

  // Where py-spy is for a process of `record`: its venv (VIRTUAL_ENV in the
  // job's --env, or the directory of an interpreter named by path), then
  // the agent's PATH. Empty: none.
  std::string FindPySpy(const JobRecord& record, const RunProcess& process) const;

 private:
  std::string DumpOne(const JobRecord& record, const RunProcess& process, ProcessDump& out);
  void CollectNcclTraces(const JobRecord& record, const std::string& dir, StackDump& dump);

  const sys::HostFs& fs_;
  sys::CommandRunner& runner_;
  const sys::Clock& clock_;
  const std::string agent_path_;
};

// The innermost frame of the first thread in `py-spy dump` output.
std::string TopPythonFrame(const std::string& py_spy_output);

}  // namespace gpuctl::train
