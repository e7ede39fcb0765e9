#include "agents/health/gpu_fault_watch.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "agents/health/gpu_fault_classes.h"

namespace gpuctl::health {
namespace {

int64_t UnixMs(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

// What the driver itself says is wrong with the GPU: each of these takes it
// out of service until a reset (NVIDIA's GPU Memory Error Management: a
// pending retirement or row remap needs one; a remap failure, double-bit
// errors or a lost GPU mean the GPU should not run work).
std::optional<std::string> FaultOf(const sys::GpuDevice& gpu) {
  if (gpu.lost) return "GPU lost: the driver answers GPU_IS_LOST";
  if (gpu.row_remap_failure.value_or(false)) return std::string(kRowRemapFailure);
  if (gpu.row_remap_pending.value_or(false)) return "row remap pending (takes effect at the next GPU reset)";
  if (gpu.retired_pages_pending.value_or(false)) return "retired pages pending (take effect at the next GPU reset)";
  if (gpu.ecc_uncorrected && *gpu.ecc_uncorrected > 0) {
    return "volatile double-bit ECC errors: " + std::to_string(*gpu.ecc_uncorrected);
  }
  return std::nullopt;
}

std::string CanonicalBus(const sys::GpuDevice& gpu) {
  return NormalizePciBusId(gpu.pci_bus_id).value_or(gpu.pci_bus_id);
}

nlohmann::json GpuFields(const sys::GpuDevice& gpu) {
  return {{"gpu", gpu.index}, {"uuid", gpu.uuid}, {"pci_bus_id", CanonicalBus(gpu)}};
}

}  // namespace

GpuFaultWatch::GpuFaultWatch(GpuDrains& drains, std::function<sys::GpuReport()> read_gpus, const sys::Clock& clock,
                             Publish publish, OnFault on_fault)
    : drains_(drains),
      read_gpus_(std::move(read_gpus)),
      clock_(clock),
      publish_(std::move(publish)),
      on_fault_(std::move(on_fault)) {}

GpuFaultWatch::~GpuFaultWatch() { Stop(); }

void GpuFaultWatch::Start(std::optional<sys::KernelLogSource> source, std::chrono::milliseconds interval) {
  source_ = std::move(source);
  thread_ = std::thread([this, interval] {
    std::unique_lock lock(stop_mutex_);
    while (!stop_) {
      lock.unlock();
      std::vector<std::string> lines;
      if (source_) lines = source_->ReadLines();
      Poll(lines);
      lock.lock();
      clock_.WaitUntil(lock, stop_wake_, clock_.SteadyNow() + interval, [this] { return stop_; });
    }
  });
}

void GpuFaultWatch::Stop() {
  {
    std::lock_guard lock(stop_mutex_);
    stop_ = true;
  }
  stop_wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void GpuFaultWatch::Poll(const std::vector<std::string>& lines) {
  std::lock_guard lock(mutex_);
  sys::GpuReport report = read_gpus_ ? read_gpus_() : sys::GpuReport{};
  // A lost GPU is named in the reading's error, the others read fine; any
  // other error leaves nothing to say of the GPUs.
  const bool any_lost = std::any_of(report.devices.begin(), report.devices.end(), [](const auto& g) { return g.lost; });
  const bool read_ok = report.source != sys::GpuSourceKind::kNone && (report.error.empty() || any_lost);
  if (read_ok) {
    for (auto& [uuid, listed] : listed_) listed = false;
    for (sys::GpuDevice& gpu : report.devices) {
      if (gpu.uuid.empty() && gpu.lost) {
        // Lost before its first reading here: known by its index, if at all.
        for (const auto& [uuid, known] : known_) {
          if (known.index == gpu.index) gpu.uuid = uuid;
        }
      }
      if (gpu.uuid.empty()) continue;
      if (!gpu.lost) known_[gpu.uuid] = gpu;
      known_.try_emplace(gpu.uuid, gpu);
      listed_[gpu.uuid] = true;
    }
  }
  for (const std::string& line : lines) {
    if (std::optional<XidEvent> xid = ParseXidLine(line)) OnXid(*xid);
  }
  if (!read_ok) return;  // no reading: nothing can be said of the GPUs
  for (const sys::GpuDevice& gpu : report.devices) {
    if (gpu.drain) continue;
    if (gpu.lost && gpu.uuid.empty()) {
      if (!lost_unnamed_.insert(gpu.index).second) continue;
      const std::string reason = "GPU lost: the driver answers GPU_IS_LOST";
      spdlog::warn("GPU {} is lost, and was never read before: it cannot be drained by name; the queue leaves it out",
                   gpu.index);
      publish_("GPU " + std::to_string(gpu.index) + " faulted: " + reason + " (no UUID or bus id known to drain it by)",
               {{"gpu", gpu.index}, {"uuid", nullptr}, {"pci_bus_id", nullptr}, {"xid", nullptr},
                {"class", std::string(XidClassName(XidClass::kGpuFault))}, {"reason", reason},
                {"message", report.error}, {"pid", nullptr}, {"drained", false}});
      if (on_fault_) on_fault_(gpu, reason);
      continue;
    }
    const sys::GpuDevice& who = gpu.lost && known_.count(gpu.uuid) ? known_.at(gpu.uuid) : gpu;
    if (std::optional<std::string> why = FaultOf(gpu)) DrainFor(who, *why, std::nullopt, "read from the driver: " + *why);
  }
  // A GPU count that drops: the missing GPU is lost (fallen off the bus,
  // or its driver gave up on it).
  for (const auto& [uuid, listed] : listed_) {
    if (!listed && !drains_.IsDrained(uuid)) {
      DrainFor(known_.at(uuid), "GPU lost: no longer listed by the driver", std::nullopt,
               "listed before, missing from the last reading");
    }
  }
}

void GpuFaultWatch::OnXid(const XidEvent& xid) {
  const sys::GpuDevice* gpu = nullptr;
  for (const auto& [uuid, known] : known_) {
    if (CanonicalBus(known) == xid.pci_bus_id) gpu = &known;
  }
  const XidClass cls = ClassifyXid(xid.xid);
  const std::string reason = "Xid " + std::to_string(xid.xid) + ": " + std::string(XidSummary(xid.xid));
  if (cls == XidClass::kGpuFault && gpu) {
    DrainFor(*gpu, reason, xid.xid, xid.message);
    return;
  }
  if (cls == XidClass::kInformational) {
    spdlog::info("kernel: Xid {} on {} ({}): {}", xid.xid, xid.pci_bus_id, XidSummary(xid.xid), xid.message);
    return;
  }
  // The application's fault, or a GPU fault on a bus id no reading listed:
  // published, nothing drained.
  nlohmann::json fields = gpu ? GpuFields(*gpu) : nlohmann::json{{"gpu", nullptr}, {"uuid", nullptr},
                                                                 {"pci_bus_id", xid.pci_bus_id}};
  fields["xid"] = xid.xid;
  fields["class"] = std::string(XidClassName(cls));
  fields["reason"] = reason;
  fields["message"] = xid.message;
  fields["pid"] = xid.pid ? nlohmann::json(*xid.pid) : nlohmann::json(nullptr);
  fields["drained"] = false;
  publish_((gpu ? "GPU " + std::to_string(gpu->index) : "PCI " + xid.pci_bus_id) + ": " + reason +
               (cls == XidClass::kApplication ? " (the application's fault: nothing drained)"
                                              : " (no GPU with this bus id is known: nothing drained)"),
           std::move(fields));
}

void GpuFaultWatch::DrainFor(const sys::GpuDevice& gpu, const std::string& reason, std::optional<int> xid,
                             const std::string& message) {
  GpuDrain drain{CanonicalBus(gpu), gpu.uuid, static_cast<int>(gpu.index), reason, xid, message,
                 UnixMs(clock_.WallNow()), false};
  Result<bool> drained = drains_.Drain(drain);
  if (!drained.ok()) {
    spdlog::error("GPU {} ({}) faulted ({}), but cannot be drained: {}", gpu.index, gpu.uuid, reason,
                  drained.status().message());
  } else if (!*drained) {
    return;  // drained already: one event per drain
  }
  nlohmann::json fields = GpuFields(gpu);
  fields["xid"] = xid ? nlohmann::json(*xid) : nlohmann::json(nullptr);
  fields["class"] = std::string(XidClassName(XidClass::kGpuFault));
  fields["reason"] = reason;
  fields["message"] = message;
  fields["pid"] = nullptr;
  fields["drained"] = drained.ok();
  spdlog::warn("GPU {} ({}) faulted: {}; drained: the queue places no job on it", gpu.index, gpu.uuid, reason);
  publish_("GPU " + std::to_string(gpu.index) + " faulted: " + reason + (drained.ok() ? "; drained" : "; NOT drained"),
           std::move(fields));
  if (on_fault_) on_fault_(gpu, reason);
}

std::optional<std::string> GpuFaultWatch::StillFaulty(const sys::GpuDevice& gpu) {
  std::lock_guard lock(mutex_);
  if (auto listed = listed_.find(gpu.uuid); listed != listed_.end() && !listed->second) {
    return "it is still not listed by the driver";
  }
  if (std::optional<std::string> why = FaultOf(gpu)) return "it still reads " + *why;
  return std::nullopt;
}

}  // namespace gpuctl::health
