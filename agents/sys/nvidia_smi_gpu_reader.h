// GpuReader over the nvidia-smi CLI, for hosts where NVML cannot be loaded by
// the agent (a container with the CLI bind-mounted but not the library, an
// unusual library path). Three runs per Read: --query-gpu,
// --query-compute-apps and --query-remapped-rows (row remapping has its own
// query; --query-gpu knows none of its fields), all
// --format=csv,noheader,nounits.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "agents/sys/command_runner.h"
#include "agents/sys/gpu_reader.h"
#include "agents/sys/nvidia_smi_csv.h"

namespace gpuctl::sys {

class NvidiaSmiGpuReader : public GpuReader {
 public:
  // `executable`: a path (as FindExecutable gives) or a name on PATH.
  // `runner` must outlive the reader.
  NvidiaSmiGpuReader(std::string executable, CommandRunner& runner,
                     std::chrono::milliseconds timeout = std::chrono::seconds(10));

  // Drivers before 535 reject clocks_event_reasons.active; the reader then
  // asks for clocks_throttle_reasons.active and keeps doing so. A refused
  // optional field (retired_pages.pending) is dropped the same way, and a
  // refused --query-remapped-rows is not asked again: those values stay
  // unknown and nothing is reported wrong. nvidia-smi failing (no driver,
  // version mismatch, hung GPU) gives source kNone and nvidia-smi's own words
  // in GpuReport::error; a failed process or remapped-rows query keeps the
  // GPU values and adds its words there.
  GpuReport Read() override;

 private:
  void ReadRemappedRows(GpuReport& report, const RunOptions& options);

  std::string executable_;
  CommandRunner& runner_;
  std::chrono::milliseconds timeout_;
  std::vector<std::string> gpu_fields_ = GpuQueryFields();  // less what this nvidia-smi refused
  bool remapped_rows_refused_ = false;
};

}  // namespace gpuctl::sys
