// nvidia-smi's CSV query output (the health reader's fallback when NVML
// cannot be loaded): ParseGpuQueryCsv with both spellings of the clock-reasons
// field, ParseComputeAppsCsv and AttachComputeApps, over any text.
// Invariants: no more rows than lines; an app lands on at most one GPU.
#include <algorithm>

#include "agents/sys/nvidia_smi_csv.h"
#include "agents/sys/text_fields.h"
#include "tests/fuzz/fuzz_check.h"

using namespace gpuctl;
using namespace gpuctl::sys;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = fuzz::AsText(data, size);
  size_t lines = Lines(text).size();
  std::vector<GpuDevice> devices;
  for (ClockReasonsField reasons : {ClockReasonsField::kEvent, ClockReasonsField::kThrottle}) {
    Result<std::vector<GpuDevice>> parsed = ParseGpuQueryCsv(text, GpuQueryFields(reasons));
    if (!parsed.ok()) continue;
    FUZZ_CHECK(parsed->size() <= lines);
    devices = std::move(*parsed);
  }
  Result<std::vector<ComputeApp>> apps = ParseComputeAppsCsv(text);
  if (!apps.ok()) return 0;
  FUZZ_CHECK(apps->size() <= lines);
  AttachComputeApps(devices, *apps);
  size_t attached = 0;
  for (const GpuDevice& device : devices) attached += device.processes.size();
  FUZZ_CHECK(attached <= apps->size());
  return 0;
}
