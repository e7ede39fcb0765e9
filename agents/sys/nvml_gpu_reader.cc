#include "agents/sys/nvml_gpu_reader.h"

#include <dlfcn.h>

#include <algorithm>
#include <functional>
#include <vector>

#include "agents/sys/host_fs.h"
#include "agents/sys/nvml_abi.h"

namespace gpuctl::sys {

struct NvmlLibrary {
  NvmlLibrary() = default;
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;
  ~NvmlLibrary() {
    if (handle != nullptr) dlclose(handle);
  }

  void* handle = nullptr;
  // Required: without these nothing can be read.
  nvml::InitFn init = nullptr;
  nvml::ShutdownFn shutdown = nullptr;
  nvml::ErrorStringFn error_string = nullptr;
  nvml::DeviceGetCountFn get_count = nullptr;
  nvml::DeviceGetHandleByIndexFn get_handle = nullptr;
  // Optional: a missing one leaves its field empty.
  nvml::SystemGetDriverVersionFn driver_version = nullptr;
  nvml::DeviceGetStringFn uuid = nullptr;
  nvml::DeviceGetStringFn name = nullptr;
  nvml::DeviceGetPciInfoFn pci_info = nullptr;
  nvml::DeviceGetCudaComputeCapabilityFn compute_capability = nullptr;
  nvml::DeviceGetMemoryInfoFn memory = nullptr;
  nvml::DeviceGetUtilizationRatesFn utilization = nullptr;
  nvml::DeviceGetTemperatureFn temperature = nullptr;
  nvml::DeviceGetMilliwattsFn power_usage = nullptr;
  nvml::DeviceGetMilliwattsFn power_limit = nullptr;
  nvml::DeviceGetClocksReasonsFn clock_reasons = nullptr;
  nvml::DeviceGetTotalEccErrorsFn ecc_errors = nullptr;
  nvml::DeviceGetProcessesFn processes = nullptr;
  nvml::DeviceGetRetiredPagesPendingStatusFn retired_pages_pending = nullptr;  // absent before R3xx
  nvml::DeviceGetRemappedRowsFn remapped_rows = nullptr;                       // absent before R450

  std::string ErrorText(nvml::Return rc) const {
    const char* text = error_string != nullptr ? error_string(rc) : nullptr;
    return text != nullptr ? text : "NVML error " + std::to_string(rc);
  }
};

namespace {

template <typename Fn>
void Resolve(void* handle, const char* symbol, Fn& out) {
  out = reinterpret_cast<Fn>(dlsym(handle, symbol));
}

// The first of `symbols` the library exports (newest name first).
template <typename Fn>
void ResolveFirst(void* handle, std::initializer_list<const char*> symbols, Fn& out) {
  for (const char* s : symbols) {
    Resolve(handle, s, out);
    if (out != nullptr) return;
  }
}

std::string CString(const char* buf, size_t size) {
  size_t len = 0;
  while (len < size && buf[len] != '\0') ++len;
  return std::string(buf, len);
}

// Collects per-GPU failures for GpuReport::error. NOT_SUPPORTED is a normal
// answer (a GeForce has no ECC counters), not a failure. GPU_IS_LOST marks
// the GPU lost: it is named once, and the reader asks it nothing more (every
// further call would only say the same).
class Calls {
 public:
  explicit Calls(const NvmlLibrary& lib) : lib_(lib) {}

  bool Ok(nvml::Return rc, uint32_t index, const char* what) {
    if (rc == nvml::kSuccess) return true;
    if (rc == nvml::kErrorGpuIsLost) {
      if (Lost(index)) return false;
      lost_.push_back(index);
    }
    if (rc != nvml::kErrorNotSupported) {
      problems_.push_back("GPU " + std::to_string(index) + ": " + what + ": " + lib_.ErrorText(rc));
    }
    return false;
  }

  bool Lost(uint32_t index) const { return std::find(lost_.begin(), lost_.end(), index) != lost_.end(); }

  std::string Joined() const {
    std::string out;
    for (const auto& p : problems_) out += (out.empty() ? "" : "; ") + p;
    return out;
  }

 private:
  const NvmlLibrary& lib_;
  std::vector<std::string> problems_;
  std::vector<uint32_t> lost_;
};

// The compute processes of one GPU. The list can grow between the sizing
// call and the filling call, so it retries with room to spare.
std::vector<nvml::ProcessInfo> ComputeProcesses(const NvmlLibrary& lib, nvml::Device dev,
                                                uint32_t index, Calls& calls) {
  std::vector<nvml::ProcessInfo> infos;
  unsigned int count = 0;
  nvml::Return rc = lib.processes(dev, &count, nullptr);
  for (int attempt = 0; rc == nvml::kErrorInsufficientSize && attempt < 3; ++attempt) {
    infos.resize(count + 8);
    count = static_cast<unsigned int>(infos.size());
    rc = lib.processes(dev, &count, infos.data());
  }
  if (!calls.Ok(rc, index, "nvmlDeviceGetComputeRunningProcesses")) return {};
  infos.resize(count);
  return infos;
}

// Fills `d` from the GPU's queries, in order, until one says the GPU is lost.
void ReadDevice(const NvmlLibrary& lib, nvml::Device dev, uint32_t i, const ProcessNameLookup& names,
                Calls& calls, GpuDevice& d) {
  const std::function<void()> steps[] = {
      [&] {
        char buf[nvml::kUuidBufferSize] = {};
        if (lib.uuid != nullptr && calls.Ok(lib.uuid(dev, buf, sizeof buf), i, "nvmlDeviceGetUUID")) {
          d.uuid = CString(buf, sizeof buf);
        }
      },
      [&] {
        char buf[nvml::kNameBufferSize] = {};
        if (lib.name != nullptr && calls.Ok(lib.name(dev, buf, sizeof buf), i, "nvmlDeviceGetName")) {
          d.name = CString(buf, sizeof buf);
        }
      },
      [&] {
        nvml::PciInfo pci{};
        if (lib.pci_info != nullptr && calls.Ok(lib.pci_info(dev, &pci), i, "nvmlDeviceGetPciInfo")) {
          d.pci_bus_id = CString(pci.busId, sizeof pci.busId);
        }
      },
      [&] {
        int major = 0, minor = 0;
        if (lib.compute_capability != nullptr &&
            calls.Ok(lib.compute_capability(dev, &major, &minor), i, "nvmlDeviceGetCudaComputeCapability")) {
          d.compute_capability = std::to_string(major) + "." + std::to_string(minor);
        }
      },
      // nvmlDeviceGetMemoryInfo (v1) counts the driver's reserved memory as
      // used, so `used` is total - free; nvidia-smi's memory.used leaves the
      // reservation out (a few hundred MiB on an idle H200).
      [&] {
        nvml::Memory mem{};
        if (lib.memory != nullptr && calls.Ok(lib.memory(dev, &mem), i, "nvmlDeviceGetMemoryInfo")) {
          d.memory_total_bytes = mem.total;
          d.memory_used_bytes = mem.used;
          d.memory_free_bytes = mem.free;
        }
      },
      [&] {
        nvml::Utilization util{};
        if (lib.utilization != nullptr &&
            calls.Ok(lib.utilization(dev, &util), i, "nvmlDeviceGetUtilizationRates")) {
          d.utilization_gpu_pct = util.gpu;
          d.utilization_memory_pct = util.memory;
        }
      },
      [&] {
        unsigned int celsius = 0;
        if (lib.temperature != nullptr &&
            calls.Ok(lib.temperature(dev, nvml::kTemperatureGpu, &celsius), i, "nvmlDeviceGetTemperature")) {
          d.temperature_c = celsius;
        }
      },
      [&] {
        unsigned int mw = 0;
        if (lib.power_usage != nullptr && calls.Ok(lib.power_usage(dev, &mw), i, "nvmlDeviceGetPowerUsage")) {
          d.power_draw_w = static_cast<double>(mw) / 1000.0;
        }
      },
      [&] {
        unsigned int mw = 0;
        if (lib.power_limit != nullptr &&
            calls.Ok(lib.power_limit(dev, &mw), i, "nvmlDeviceGetEnforcedPowerLimit")) {
          d.power_limit_w = static_cast<double>(mw) / 1000.0;
        }
      },
      [&] {
        unsigned long long mask = 0;
        if (lib.clock_reasons != nullptr &&
            calls.Ok(lib.clock_reasons(dev, &mask), i, "nvmlDeviceGetCurrentClocksEventReasons")) {
          d.clock_event_reasons = DecodeClockEventReasons(mask);
        }
      },
      [&] {
        unsigned long long errors = 0;
        if (lib.ecc_errors != nullptr &&
            calls.Ok(lib.ecc_errors(dev, nvml::kMemoryErrorUncorrected, nvml::kVolatileEcc, &errors), i,
                     "nvmlDeviceGetTotalEccErrors")) {
          d.ecc_uncorrected = errors;
        }
      },
      // NOT_SUPPORTED on Ampere and later, which remap rows instead.
      [&] {
        nvml::EnableState pending = 0;
        if (lib.retired_pages_pending != nullptr &&
            calls.Ok(lib.retired_pages_pending(dev, &pending), i, "nvmlDeviceGetRetiredPagesPendingStatus")) {
          d.retired_pages_pending = pending == nvml::kFeatureEnabled;
        }
      },
      // NOT_SUPPORTED before Ampere, and on a MIG-enabled GPU with instances.
      [&] {
        unsigned int corrected = 0, uncorrected = 0, pending = 0, failure = 0;
        if (lib.remapped_rows != nullptr &&
            calls.Ok(lib.remapped_rows(dev, &corrected, &uncorrected, &pending, &failure), i,
                     "nvmlDeviceGetRemappedRows")) {
          d.row_remap_pending = pending != 0;
          d.row_remap_failure = failure != 0;
        }
      },
      [&] {
        if (lib.processes == nullptr) return;
        for (const nvml::ProcessInfo& p : ComputeProcesses(lib, dev, i, calls)) {
          GpuProcessInfo info;
          info.pid = p.pid;
          info.name = names ? names(p.pid) : std::string();
          // Without permission NVML gives the pid but not the memory.
          info.used_memory_bytes = p.usedGpuMemory == nvml::kValueNotAvailable ? 0 : p.usedGpuMemory;
          d.processes.push_back(std::move(info));
        }
      },
  };
  for (const auto& step : steps) {
    if (calls.Lost(i)) return;
    step();
  }
}

}  // namespace

ProcessNameLookup ProcCommLookup(std::string root) {
  return [fs = HostFs(std::move(root))](uint32_t pid) {
    auto comm = fs.ReadFile("proc/" + std::to_string(pid) + "/comm");
    if (!comm.ok()) return std::string();  // gone, or another pid namespace
    std::string name = std::move(*comm);
    while (!name.empty() && (name.back() == '\n' || name.back() == '\r')) name.pop_back();
    return name;
  };
}

Result<std::unique_ptr<NvmlGpuReader>> NvmlGpuReader::Open(const std::string& library,
                                                          ProcessNameLookup names) {
  auto lib = std::make_unique<NvmlLibrary>();
  dlerror();
  lib->handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib->handle == nullptr) {
    const char* why = dlerror();
    std::string detail = why != nullptr ? why : "";
    if (detail.empty() || detail.find("No such file") != std::string::npos) {
      return NotFound(library + " not found");
    }
    return NotFound("cannot load " + library + ": " + detail);
  }

  void* h = lib->handle;
  Resolve(h, "nvmlInit_v2", lib->init);
  Resolve(h, "nvmlShutdown", lib->shutdown);
  Resolve(h, "nvmlErrorString", lib->error_string);
  Resolve(h, "nvmlDeviceGetCount_v2", lib->get_count);
  Resolve(h, "nvmlDeviceGetHandleByIndex_v2", lib->get_handle);
  const std::pair<bool, const char*> required[] = {
      {lib->init != nullptr, "nvmlInit_v2"},
      {lib->shutdown != nullptr, "nvmlShutdown"},
      {lib->error_string != nullptr, "nvmlErrorString"},
      {lib->get_count != nullptr, "nvmlDeviceGetCount_v2"},
      {lib->get_handle != nullptr, "nvmlDeviceGetHandleByIndex_v2"}};
  for (const auto& [found, symbol] : required) {
    if (!found) {
      return NotFound(library + " has no " + symbol +
                      "; the NVIDIA driver is too old for gpuctl (install a current driver)");
    }
  }
  Resolve(h, "nvmlSystemGetDriverVersion", lib->driver_version);
  Resolve(h, "nvmlDeviceGetUUID", lib->uuid);
  Resolve(h, "nvmlDeviceGetName", lib->name);
  Resolve(h, "nvmlDeviceGetPciInfo_v3", lib->pci_info);
  Resolve(h, "nvmlDeviceGetCudaComputeCapability", lib->compute_capability);
  Resolve(h, "nvmlDeviceGetMemoryInfo", lib->memory);
  Resolve(h, "nvmlDeviceGetUtilizationRates", lib->utilization);
  Resolve(h, "nvmlDeviceGetTemperature", lib->temperature);
  Resolve(h, "nvmlDeviceGetPowerUsage", lib->power_usage);
  Resolve(h, "nvmlDeviceGetEnforcedPowerLimit", lib->power_limit);
  // Renamed in driver 535; older drivers only have the throttle name.
  ResolveFirst(h, {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"},
               lib->clock_reasons);
  Resolve(h, "nvmlDeviceGetTotalEccErrors", lib->ecc_errors);
  ResolveFirst(h, {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2"},
               lib->processes);
  Resolve(h, "nvmlDeviceGetRetiredPagesPendingStatus", lib->retired_pages_pending);
  Resolve(h, "nvmlDeviceGetRemappedRows", lib->remapped_rows);

  nvml::Return rc = lib->init();
  if (rc == nvml::kErrorLibRmVersionMismatch) {
    // nvmlErrorString says "RM has detected an NVML/RM version mismatch";
    // users know nvidia-smi's wording.
    return FailedPrecondition(std::string(kNvmlVersionMismatch));
  }
  if (rc != nvml::kSuccess) return Unavailable("Failed to initialize NVML: " + lib->ErrorText(rc));
  return std::unique_ptr<NvmlGpuReader>(new NvmlGpuReader(std::move(lib), std::move(names)));
}

NvmlGpuReader::NvmlGpuReader(std::unique_ptr<NvmlLibrary> lib, ProcessNameLookup names)
    : lib_(std::move(lib)), names_(std::move(names)) {}

NvmlGpuReader::~NvmlGpuReader() {
  if (lib_ != nullptr) lib_->shutdown();
}

GpuReport NvmlGpuReader::Read() {
  const NvmlLibrary& lib = *lib_;
  GpuReport report;
  report.source = GpuSourceKind::kNvml;
  Calls calls(lib);

  std::string driver;
  if (lib.driver_version != nullptr) {
    char buf[nvml::kDriverVersionBufferSize] = {};
    if (lib.driver_version(buf, sizeof buf) == nvml::kSuccess) driver = CString(buf, sizeof buf);
  }

  unsigned int count = 0;
  if (nvml::Return rc = lib.get_count(&count); rc != nvml::kSuccess) {
    report.source = GpuSourceKind::kNone;
    report.error = "nvmlDeviceGetCount: " + lib.ErrorText(rc);
    return report;
  }
  if (count == 0) {
    report.error = "No devices were found";  // nvidia-smi's words
    return report;
  }

  for (unsigned int i = 0; i < count; ++i) {
    nvml::Device dev = nullptr;
    // A GPU lost before its handle is still listed: dropping it would hide
    // the fault from the fault watch.
    if (!calls.Ok(lib.get_handle(i, &dev), i, "nvmlDeviceGetHandleByIndex") && !calls.Lost(i)) continue;
    GpuDevice d;
    d.index = i;
    d.driver_version = driver;
    if (!calls.Lost(i)) ReadDevice(lib, dev, i, names_, calls, d);
    d.lost = calls.Lost(i);
    if (auto known = identities_.find(i); d.lost && known != identities_.end()) {
      // What it was when it last answered: the fault watch drains by these.
      if (d.uuid.empty()) d.uuid = known->second.uuid;
      if (d.name.empty()) d.name = known->second.name;
      if (d.pci_bus_id.empty()) d.pci_bus_id = known->second.pci_bus_id;
      if (d.compute_capability.empty()) d.compute_capability = known->second.compute_capability;
    } else if (!d.lost && !d.uuid.empty()) {
      GpuDevice& identity = identities_[i];
      identity.uuid = d.uuid;
      identity.name = d.name;
      identity.pci_bus_id = d.pci_bus_id;
      identity.compute_capability = d.compute_capability;
    }
    report.devices.push_back(std::move(d));
  }
  report.error = calls.Joined();
  if (report.devices.empty()) report.source = GpuSourceKind::kNone;
  return report;
}

}  // namespace gpuctl::sys
