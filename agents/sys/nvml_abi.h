// The few parts of NVML's C ABI that gpuctl calls, declared here so nothing
// needs nvml.h or links libnvidia-ml at build time. Values and layouts are
// those of NVML's public header (nvml.h from the CUDA toolkit / NVML API
// reference, stable across drivers since the _v2/_v3 entry points appeared):
// the nvmlReturn_t codes, nvmlMemory_t, nvmlUtilization_t, nvmlPciInfo_t
// (the _v3 layout) and nvmlProcessInfo_t (the _v2/_v3 layout). Every entry
// point named below is exported by the 580 driver's libnvidia-ml.so.1
// (../shared/fixtures/gpu-host/nvml-symbols.txt); the fault queries
// (nvmlDeviceGetRetiredPagesPendingStatus, nvmlDeviceGetRemappedRows) are
// missing from older drivers and resolved as optional.
#pragma once

namespace gpuctl::sys::nvml {

using Return = int;  // nvmlReturn_t
inline constexpr Return kSuccess = 0;
inline constexpr Return kErrorNotSupported = 3;
inline constexpr Return kErrorInsufficientSize = 7;
inline constexpr Return kErrorGpuIsLost = 15;  // fell off the bus or stopped answering
inline constexpr Return kErrorLibRmVersionMismatch = 18;

struct DeviceSt;
using Device = DeviceSt*;  // nvmlDevice_t, opaque

inline constexpr unsigned kTemperatureGpu = 0;           // NVML_TEMPERATURE_GPU
inline constexpr unsigned kMemoryErrorUncorrected = 1;   // NVML_MEMORY_ERROR_TYPE_UNCORRECTED
inline constexpr unsigned kVolatileEcc = 0;              // NVML_VOLATILE_ECC
inline constexpr unsigned long long kValueNotAvailable = ~0ULL;  // NVML_VALUE_NOT_AVAILABLE

using EnableState = int;  // nvmlEnableState_t, a C enum (int-sized)
inline constexpr EnableState kFeatureEnabled = 1;  // NVML_FEATURE_ENABLED (DISABLED is 0)

// Buffer sizes NVML documents as large enough.
inline constexpr unsigned kDriverVersionBufferSize = 80;  // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE
inline constexpr unsigned kUuidBufferSize = 96;           // NVML_DEVICE_UUID_V2_BUFFER_SIZE
inline constexpr unsigned kNameBufferSize = 96;           // NVML_DEVICE_NAME_V2_BUFFER_SIZE

struct Memory {  // nvmlMemory_t, bytes
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

struct Utilization {  // nvmlUtilization_t, percent
  unsigned int gpu;
  unsigned int memory;
};

struct PciInfo {  // nvmlPciInfo_t as filled by nvmlDeviceGetPciInfo_v3
  char busIdLegacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[32];  // "00000000:00:06.0"
};

struct ProcessInfo {  // nvmlProcessInfo_t (_v2 and _v3 entry points)
  unsigned int pid;
  unsigned long long usedGpuMemory;  // kValueNotAvailable where not permitted
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};

using InitFn = Return (*)();
using ShutdownFn = Return (*)();
using ErrorStringFn = const char* (*)(Return);
using SystemGetDriverVersionFn = Return (*)(char*, unsigned int);
using DeviceGetCountFn = Return (*)(unsigned int*);
using DeviceGetHandleByIndexFn = Return (*)(unsigned int, Device*);
using DeviceGetStringFn = Return (*)(Device, char*, unsigned int);  // UUID, Name
using DeviceGetPciInfoFn = Return (*)(Device, PciInfo*);
using DeviceGetCudaComputeCapabilityFn = Return (*)(Device, int*, int*);
using DeviceGetMemoryInfoFn = Return (*)(Device, Memory*);
using DeviceGetUtilizationRatesFn = Return (*)(Device, Utilization*);
using DeviceGetTemperatureFn = Return (*)(Device, unsigned int, unsigned int*);
using DeviceGetMilliwattsFn = Return (*)(Device, unsigned int*);  // PowerUsage, EnforcedPowerLimit
using DeviceGetClocksReasonsFn = Return (*)(Device, unsigned long long*);
using DeviceGetTotalEccErrorsFn = Return (*)(Device, unsigned int, unsigned int, unsigned long long*);
using DeviceGetProcessesFn = Return (*)(Device, unsigned int*, ProcessInfo*);
using DeviceGetRetiredPagesPendingStatusFn = Return (*)(Device, EnableState*);
// corrRows, uncRows, isPending, failureOccurred
using DeviceGetRemappedRowsFn = Return (*)(Device, unsigned int*, unsigned int*, unsigned int*, unsigned int*);

}  // namespace gpuctl::sys::nvml
