// Where a job that asks for GPUs may run now, or what it waits for. Pure:
// the supervisor describes each GPU (its memory, the gpuctl job holding it,
// the processes of others on it) and asks; QueueOrder orders the waiting
// jobs.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agents/sys/gpu_types.h"
#include "common/status.h"

namespace gpuctl::train {

// GPU memory no job of this agent accounts for. pid 0: memory the device
// reports in use with no process listed for it (vGPU, some MIG setups).
struct ForeignProcess {
  uint32_t pid = 0;
  uint64_t bytes = 0;
  // Alive in the agent's pid namespace. A process of another namespace (an
  // LXC guest's neighbour, a container) is not, and holds memory all the same.
  bool visible = true;
};

// One GPU as the queue sees it, in PCI bus order (NVML's index order).
struct GpuSlot {
  uint32_t index = 0;
  std::string uuid;
  uint64_t total_bytes = 0;
  uint64_t free_bytes = 0;
  std::string held_by;                   // the gpuctl job holding it; empty: none
  std::vector<ForeignProcess> foreign;   // processes the agent did not start
  std::string drained;                   // why it is out of service; empty: it is not
};

// Whose a GPU process is, as the supervisor knows it: a job of this agent
// by its cgroup, its process group or the pids seen of its run.
struct GpuProcessOwner {
  std::string job;
  bool running = true;  // false: a run that just ended, its memory on the way out
};

// The GPUs as the queue sees them, from a reading. `held`: GPU index -> the
// job given it. `owner`: whose a pid is, or nullopt. `visible`: whether a
// pid is alive here. `job_bytes`: GPU index -> what the agent's running jobs
// were last seen to hold on it, subtracted from the device's used memory
// where the reading lists no processes (a GPU given to a job counts as all
// its own then). A process no job owns is foreign,
// whether or not its pid is visible; a running job's process holds its GPU.
std::vector<GpuSlot> GpuSlotsFromReport(const sys::GpuReport& report, const std::map<uint32_t, std::string>& held,
                                        const std::function<std::optional<GpuProcessOwner>(uint32_t pid)>& owner,
                                        const std::function<bool(uint32_t pid)>& visible,
                                        const std::map<uint32_t, uint64_t>& job_bytes);

struct GpuRequest {
  uint32_t num_gpus = 0;              // --num-gpus: any N; 0 with `gpus`: those
  std::vector<std::string> gpus;      // --gpus: indices or UUIDs
  std::optional<uint64_t> gpu_mem_bytes;  // --gpu-mem: free on each GPU
};

// "0,1" or "GPU-a,GPU-b" (--gpus) as its items.
std::vector<std::string> SplitGpuList(std::string_view gpus);

// The indices `gpus` names ("0,1" or UUIDs) on this host. Errors
// (kInvalidArgument): a GPU the host does not have.
Result<std::vector<uint32_t>> ResolveGpus(const std::vector<std::string>& gpus, const std::vector<GpuSlot>& slots);

// Whether the queue can place `gpus` (indices or full UUIDs of this host;
// a number it lacks counts as placeable, to be refused). MIG instances and
// UUID prefixes are CUDA's to resolve: false, they bypass the queue.
bool Placeable(const std::vector<std::string>& gpus, const std::vector<GpuSlot>& slots);

// A request no wait can satisfy, refused at once (kInvalidArgument, exit 2):
// more GPUs than the host has, more memory than a GPU has, a GPU it lacks.
Status CheckGpuRequest(const GpuRequest& request, const std::vector<GpuSlot>& slots);

struct GpuPlacement {
  std::vector<uint32_t> gpus;  // chosen, ascending; empty: wait
  std::string waiting_for;     // "2 GPUs: GPU 0 held by job x, GPU 3 has 40.0 GiB used by pid 1234"
};

// A GPU is free when no gpuctl job holds it, others' processes use less than
// `busy_below_bytes` of it, and it has `gpu_mem_bytes` free. A count takes
// the first free GPUs in bus order; a list needs all of its GPUs free.
GpuPlacement PlaceJob(const GpuRequest& request, const std::vector<GpuSlot>& slots, uint64_t busy_below_bytes);

// A waiting job, for the queue's order: higher priority first, then first
// come, first served (then by name, so the order is total).
struct QueuedJob {
  std::string name;
  int32_t priority = 0;
  int64_t queued_unix_ms = 0;
};
std::vector<std::string> QueueOrder(std::vector<QueuedJob> jobs);

// Where a new job that asks for GPUs goes, decided at its start: started
// (on the GPUs chosen for it, or as it asked when the queue cannot place
// its list), queued, or refused.
struct StartPlacement {
  enum class Kind { kStart, kQueue, kRefuse };
  Kind kind = Kind::kStart;
  std::vector<uint32_t> gpus;  // kStart: chosen by the queue; empty: as the job asked
  std::string waiting_for;     // kQueue
  Status refusal;              // kRefuse
};

// `slots`: one per GPU the reading saw (none: `read_error` says why).
// `ahead`: jobs queued with this one's priority or higher, which it never
// passes. A count or memory with no GPU seen is refused; so is what no wait
// can satisfy (CheckGpuRequest). MIG instances and UUID prefixes start as
// asked, without the queue (Placeable).
StartPlacement DecideStartPlacement(const GpuRequest& request, const std::vector<GpuSlot>& slots,
                                    const std::string& read_error, uint32_t ahead, uint64_t busy_below_bytes);

// One queued job, for an admission pass: its name and what it asks for.
struct QueuedRequest {
  std::string name;
  GpuRequest request;
};

// What an admission pass decided for one queued job.
struct Admission {
  std::string name;
  std::vector<uint32_t> gpus;  // admitted onto these; empty: it waits
  uint32_t position = 0;       // waiting: its place (1 = next)
  std::string waiting_for;     // waiting: what for
};

// One pass down the queue (`in_order`, QueueOrder's order): each job whose
// GPUs are free is admitted and takes them, until the first that must wait;
// nobody passes that one (first come, first served), and each after it is
// told its place and what it waits for. `slots` empty: no GPU was seen
// (`read_error` says why).
std::vector<Admission> PlanAdmissions(const std::vector<QueuedRequest>& in_order, std::vector<GpuSlot> slots,
                                      const std::string& read_error, uint64_t busy_below_bytes);

// "0,3": CUDA_VISIBLE_DEVICES for the chosen GPUs (with CUDA_DEVICE_ORDER=PCI_BUS_ID).
std::string VisibleDevices(const std::vector<uint32_t>& gpus);

}  // namespace gpuctl::train
