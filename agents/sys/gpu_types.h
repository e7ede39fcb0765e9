// What gpuctl knows about the GPUs of a host, whichever way it was read
// (NVML or nvidia-smi). Values a GPU or driver may not report are optional.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpuctl::sys {

struct GpuProcessInfo {
  uint32_t pid = 0;
  std::string name;  // may be empty where the source does not give it
  uint64_t used_memory_bytes = 0;
};

// A GPU taken out of service (agents/health/gpu_drains.h): a fault it is
// to blame for, or a person. The queue places no job on it.
struct GpuDrainInfo {
  std::string reason;       // "Xid 79: GPU has fallen off the bus"
  std::optional<int> xid;
  std::string message;      // the kernel's line, or what was seen
  int64_t since_unix_ms = 0;
  bool manual = false;
};

struct GpuDevice {
  uint32_t index = 0;
  std::string uuid;
  std::string name;
  std::string pci_bus_id;          // "00000000:00:06.0"
  std::string compute_capability;  // "9.0"
  std::string driver_version;
  std::optional<uint64_t> memory_total_bytes;
  std::optional<uint64_t> memory_used_bytes;
  std::optional<uint64_t> memory_free_bytes;
  std::optional<uint32_t> utilization_gpu_pct;
  std::optional<uint32_t> utilization_memory_pct;
  std::optional<uint32_t> temperature_c;
  std::optional<double> power_draw_w;
  std::optional<double> power_limit_w;
  std::vector<std::string> clock_event_reasons;  // decoded words, see DecodeClockEventReasons
  std::optional<uint64_t> ecc_uncorrected;
  // Memory-repair faults; each is empty (unknown) where the GPU, driver or
  // nvidia-smi does not report it, so "no" is never assumed.
  // Pages retired by Dynamic Page Retirement (before Ampere) waiting for a
  // driver reload or reboot to take effect.
  std::optional<bool> retired_pages_pending;
  // Row remapping (Ampere and later): a remapped row waits for a GPU reset;
  // a failure means the remapper ran out of spare rows or could not remap.
  std::optional<bool> row_remap_pending;
  std::optional<bool> row_remap_failure;
  // The driver reports the GPU lost (NVML_ERROR_GPU_IS_LOST: fell off the
  // bus, or stopped answering). Such a GPU is still listed, with what was read
  // before it was found lost (at least its index); its other values are empty.
  bool lost = false;
  std::vector<GpuProcessInfo> processes;
  std::optional<GpuDrainInfo> drain;  // set by the health sampler from the drain set
};

enum class GpuSourceKind { kNone, kNvml, kNvidiaSmi };

struct GpuReport {
  GpuSourceKind source = GpuSourceKind::kNone;
  // Why there are no GPUs or what failed ("no NVIDIA driver found: ...",
  // "Failed to initialize NVML: Driver/library version mismatch"). A host
  // without a driver is a normal state: source kNone, no devices, a reason.
  std::string error;
  std::vector<GpuDevice> devices;
};

// NVML's clocks-event-reason bitmask (nvmlClocksEventReason*, the same bits
// nvidia-smi prints as clocks_event_reasons.active) as words, lowest bit first:
// 0x1 gpu_idle, 0x2 applications_clocks_setting, 0x4 sw_power_cap,
// 0x8 hw_slowdown, 0x10 sync_boost, 0x20 sw_thermal_slowdown,
// 0x40 hw_thermal_slowdown, 0x80 hw_power_brake_slowdown,
// 0x100 display_clocks_setting; unknown bits as "0x...".
std::vector<std::string> DecodeClockEventReasons(uint64_t mask);

}  // namespace gpuctl::sys
