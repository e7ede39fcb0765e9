// Failing GPUs: a watch over the kernel log (NVRM Xid lines) and the GPUs'
// own readings (double-bit ECC errors, a GPU no longer listed). A fault the
// GPU is to blame for (gpu_fault_classes.h) drains it (gpu_drains.h: the
// queue places no job on it, across restarts), is published as gpu_fault,
// and is handed to `on_fault` (the job supervisor stops the jobs on it). A
// fault that is the application's (Xid 13, 31, 43 ...) is published with
// its pid, and drains nothing.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "agents/health/gpu_drains.h"
#include "agents/health/xid.h"
#include "agents/sys/clock.h"
#include "agents/sys/gpu_types.h"
#include "agents/sys/kernel_log_source.h"

namespace gpuctl::health {

class GpuFaultWatch {
 public:
  // kind "gpu_fault", a message, fields (gpu, uuid, pci_bus_id, xid, class,
  // reason, message, pid, drained).
  using Publish = std::function<void(std::string message, nlohmann::json fields)>;
  // A GPU just drained for a fault: `gpu` as last read, `reason` for people.
  using OnFault = std::function<void(const sys::GpuDevice& gpu, const std::string& reason)>;

  GpuFaultWatch(GpuDrains& drains, std::function<sys::GpuReport()> read_gpus, const sys::Clock& clock,
                Publish publish, OnFault on_fault);
  ~GpuFaultWatch();

  // Reads kernel log lines from `source` (none: only the GPUs' readings)
  // every `interval` on a thread of its own.
  void Start(std::optional<sys::KernelLogSource> source, std::chrono::milliseconds interval);
  void Stop();

  // One pass, on the caller's thread (tests): `lines` from the kernel log,
  // then a reading of the GPUs.
  void Poll(const std::vector<std::string>& lines);

  // Why `gpu` still reads faulty now (double-bit ECC errors; not listed);
  // nullopt when nothing says so. An undrain is refused while it does.
  std::optional<std::string> StillFaulty(const sys::GpuDevice& gpu);

 private:
  void OnXid(const XidEvent& xid);
  void DrainFor(const sys::GpuDevice& gpu, const std::string& reason, std::optional<int> xid,
                const std::string& message);

  GpuDrains& drains_;
  std::function<sys::GpuReport()> read_gpus_;
  const sys::Clock& clock_;
  Publish publish_;
  OnFault on_fault_;
  // Every GPU ever listed, by UUID, as last read: a Xid names a GPU by its
  // bus id even once it fell off the bus, and a GPU that goes missing is
  // known by what it was.
  std::map<std::string, sys::GpuDevice> known_;
  std::map<std::string, bool> listed_;  // UUID -> in the last reading
  // Indices of GPUs lost before any reading named them: no UUID or bus id
  // to drain them by (the queue leaves a lost GPU out anyway); reported once.
  std::set<uint32_t> lost_unnamed_;
  std::mutex mutex_;                    // Poll and StillFaulty, from different threads
  std::optional<sys::KernelLogSource> source_;
  std::thread thread_;
  std::mutex stop_mutex_;
  std::condition_variable stop_wake_;
  bool stop_ = false;
};

}  // namespace gpuctl::health
