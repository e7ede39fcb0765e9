// GpuReader over the nvidia-smi CLI, for hosts where NVML cannot be loaded by
// the agent (a container with the CLI bind-mounted but not the library, an
// unusual library path). Two runs per Read: --query-gpu and
// --query-compute-apps, both --format=csv,noheader,nounits.
#pragma once

#include <chrono>
#include <string>

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
  // asks for clocks_throttle_reasons.active and keeps doing so. nvidia-smi
  // failing (no driver, version mismatch, hung GPU) gives source kNone and
  // nvidia-smi's own words in GpuReport::error.
  GpuReport Read() override;

 private:
  std::string executable_;
  CommandRunner& runner_;
  std::chrono::milliseconds timeout_;
  ClockReasonsField reasons_field_ = ClockReasonsField::kEvent;
};

}  // namespace gpuctl::sys
