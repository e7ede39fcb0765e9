#include "daemon/server/gpu_faults.h"

#include <spdlog/spdlog.h>

#include "agents/health/xid.h"
#include "common/event_kinds.h"

namespace gpuctl::daemon {
namespace {

constexpr std::chrono::milliseconds kWatchInterval{500};

std::string Canonical(const std::string& bus) { return health::NormalizePciBusId(bus).value_or(bus); }

}  // namespace

GpuFaults::GpuFaults(const std::string& state_dir, const std::string& kernel_log, health::HealthSampler& sampler,
                     train::JobSupervisor& jobs, events::EventLog& events, const sys::Clock& clock)
    : drains_(state_dir + "/gpu-drains.json"), sampler_(sampler), events_(events), clock_(clock) {
  if (Status s = drains_.Load(); !s.ok()) {
    spdlog::error("GPU drains: {}; no GPU can be drained or undrained until the file is fixed or removed", s.message());
  } else if (!drains_.All().empty()) {
    spdlog::warn("{} GPU(s) drained (see gpuctl health; gpuctl gpu undrain GPU)", drains_.All().size());
  }
  sampler_.SetDrains(&drains_);
  watch_ = std::make_unique<health::GpuFaultWatch>(
      drains_,
      [this] {
        Result<health::HealthSnapshot> snapshot = sampler_.Sample();
        return snapshot.ok() ? snapshot->gpus : sys::GpuReport{};
      },
      clock,
      [this](std::string message, nlohmann::json fields) {
        events_.Publish({.kind = event_kind::kGpuFault, .job = "", .message = std::move(message), .fields = std::move(fields)});
      },
      [&jobs](const sys::GpuDevice& gpu, const std::string& reason) {
        std::vector<std::string> stopped = jobs.GpuFaulted(gpu.index, gpu.uuid, reason);
        for (const std::string& name : stopped) spdlog::warn("job '{}' stopped: its GPU {} faulted", name, gpu.index);
      });
  std::optional<sys::KernelLogSource> source;
  if (kernel_log != "off") {
    Result<sys::KernelLogSource> opened = sys::KernelLogSource::Open(kernel_log, /*from_start=*/false);
    if (opened.ok()) {
      source = std::move(opened).value();
    } else {
      spdlog::warn("the kernel log {} cannot be read ({}): GPU faults are seen from NVML alone (ECC, lost GPUs)",
                   kernel_log, opened.status().message());
    }
  }
  watch_->Start(std::move(source), kWatchInterval);
}

GpuFaults::~GpuFaults() {
  if (watch_) watch_->Stop();
  sampler_.SetDrains(nullptr);
}

Result<sys::GpuDevice> GpuFaults::FindGpu(const std::string& gpu) {
  Result<health::HealthSnapshot> snapshot = sampler_.Sample();
  if (snapshot.ok()) {
    for (const sys::GpuDevice& d : snapshot->gpus.devices) {
      if (gpu == std::to_string(d.index) || gpu == d.uuid || (!d.pci_bus_id.empty() && Canonical(gpu) == Canonical(d.pci_bus_id))) {
        return d;
      }
    }
  }
  // A drained GPU that is not listed any more (lost) is known by its drain.
  std::optional<health::GpuDrain> drain = drains_.Find(gpu);
  if (!drain) {
    for (const health::GpuDrain& d : drains_.All()) {
      if (gpu == std::to_string(d.index)) drain = d;
    }
  }
  if (drain) {
    sys::GpuDevice lost;
    lost.index = drain->index < 0 ? 0 : static_cast<uint32_t>(drain->index);
    lost.uuid = drain->uuid;
    lost.pci_bus_id = drain->pci_bus_id;
    lost.drain = sys::GpuDrainInfo{drain->reason, drain->xid, drain->message, drain->since_unix_ms, drain->manual};
    return lost;
  }
  return NotFound("no GPU '" + gpu + "' on this host (give its index, UUID or PCI bus id; see gpuctl health)");
}

v1::GpuDrainState GpuFaults::StateOf(const sys::GpuDevice& gpu) {
  v1::GpuDrainState state;
  state.set_index(gpu.index);
  state.set_uuid(gpu.uuid);
  state.set_pci_bus_id(gpu.pci_bus_id);
  std::optional<health::GpuDrain> drain = drains_.Find(gpu.uuid.empty() ? Canonical(gpu.pci_bus_id) : gpu.uuid);
  if (!drain && !gpu.pci_bus_id.empty()) drain = drains_.Find(Canonical(gpu.pci_bus_id));
  if (drain) {
    state.set_drained(true);
    v1::GpuFault* fault = state.mutable_fault();
    if (drain->xid) fault->set_xid(*drain->xid);
    fault->set_message(drain->message);
    fault->set_since_unix_ms(drain->since_unix_ms);
    fault->set_manual(drain->manual);
    fault->set_reason(drain->reason);
  }
  return state;
}

Result<v1::GpuDrainState> GpuFaults::Drain(const std::string& gpu, const std::string& reason) {
  Result<sys::GpuDevice> found = FindGpu(gpu);
  if (!found.ok()) return found.status();
  const std::string why = reason.empty() ? "drained by hand" : reason;
  health::GpuDrain drain{Canonical(found->pci_bus_id), found->uuid, static_cast<int>(found->index), why,
                         std::nullopt, why,
                         std::chrono::duration_cast<std::chrono::milliseconds>(clock_.WallNow().time_since_epoch()).count(),
                         true};
  Result<bool> drained = drains_.Drain(drain);
  if (!drained.ok()) return drained.status();
  if (*drained) {
    events_.Publish({.kind = event_kind::kGpuDrained, .job = "",
                     .message = "GPU " + std::to_string(found->index) + " drained by hand: " + why,
                     .fields = {{"gpu", found->index}, {"uuid", found->uuid}, {"pci_bus_id", Canonical(found->pci_bus_id)},
                                {"reason", why}}});
  }
  return StateOf(*found);
}

Result<v1::GpuDrainState> GpuFaults::Undrain(const std::string& gpu, bool force) {
  Result<sys::GpuDevice> found = FindGpu(gpu);
  if (!found.ok()) return found.status();
  if (!force) {
    if (std::optional<std::string> still = watch_->StillFaulty(*found)) {
      return FailedPrecondition("GPU " + std::to_string(found->index) + " still reads faulty: " + *still +
                                "; undrain it anyway with --force");
    }
  }
  Result<bool> undrained = drains_.Undrain(found->uuid.empty() ? Canonical(found->pci_bus_id) : found->uuid);
  if (!undrained.ok()) return undrained.status();
  if (*undrained) {
    events_.Publish({.kind = event_kind::kGpuUndrained, .job = "",
                     .message = "GPU " + std::to_string(found->index) + " undrained" + (force ? " (forced)" : ""),
                     .fields = {{"gpu", found->index}, {"uuid", found->uuid}, {"pci_bus_id", Canonical(found->pci_bus_id)},
                                {"forced", force}}});
  }
  return StateOf(*found);
}

}  // namespace gpuctl::daemon
