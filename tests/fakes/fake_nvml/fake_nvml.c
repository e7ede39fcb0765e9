/*
 * A stand-in libnvidia-ml.so.1 for tests: exports the NVML entry points
 * gpuctl calls, with NVML's C ABI (see agents/sys/nvml_abi.h), so the NVML
 * reader is tested through a real dlopen.
 *
 * FAKE_NVML_SCENARIO, read at each nvmlInit_v2:
 *   two_gpus (default)  GPU 0 mirrors the real H200 capture
 *                       (fixtures/gpu-host/query-gpu.csv, query-apps.csv);
 *                       GPU 1 is a GeForce RTX 4090 whose ECC query answers
 *                       NOT_SUPPORTED and whose one process is the caller.
 *   eight_h200          eight copies of the H200 above, each its own uuid and
 *                       bus id (an 8-GPU host, for the /metrics bench).
 *   no_devices          init succeeds, no GPUs.
 *   mismatch            nvmlInit_v2 returns NVML_ERROR_LIB_RM_VERSION_MISMATCH.
 *   no_driver           nvmlInit_v2 returns NVML_ERROR_DRIVER_NOT_LOADED.
 * Anything else makes nvmlInit_v2 return NVML_ERROR_UNKNOWN, so a typo in a
 * test shows.
 *
 * FAKE_NVML_PROCESSES, a file read at every query (so a test can change it
 * while the agent runs): lines "GPU_INDEX PID MIB", the compute processes
 * and their memory. When set, it replaces each GPU's one process, and a
 * GPU's used memory is the sum of its processes (free = total - used).
 *
 * fakeNvmlInitCount() (not an NVML function) lets tests check that readers
 * shut NVML down.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

typedef int nvmlReturn_t;
enum {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
  NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
  NVML_ERROR_UNKNOWN = 999
};

typedef struct nvmlDevice_st {
  unsigned int index;
} *nvmlDevice_t;

typedef struct {
  unsigned long long total, free, used;
} nvmlMemory_t;

typedef struct {
  unsigned int gpu, memory;
} nvmlUtilization_t;

typedef struct {
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
} nvmlPciInfo_t;

typedef struct {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_t;

#define MIB (1024ULL * 1024ULL)

struct FakeGpu {
  const char *uuid, *name, *bus_id;
  int cc_major, cc_minor;
  unsigned long long total_mib, free_mib;
  unsigned int util_gpu, util_mem, temp_c, power_mw, limit_mw;
  unsigned long long reasons;
  int ecc_supported;
  unsigned long long ecc;
  unsigned int pid; /* 0: the calling process */
  unsigned long long pid_mib;
};

static const struct FakeGpu kGpus[2] = {
    /* nvidia-smi: 143771 MiB total, 143156 MiB free, 0 %, 41 C, 81.94 W of
       700.00 W, reasons 0x1 (gpu_idle), 0 ECC; python3 pid 479 with 20998 MiB. */
    {"GPU-c6489789-7836-64bc-561f-33b9f6b86ea3", "NVIDIA H200", "00000000:00:06.0", 9, 0, 143771,
     143156, 0, 0, 41, 81940, 700000, 0x1, 1, 0, 479, 20998},
    {"GPU-5d2a0b7e-1c4f-4e8a-9b3d-2f6e8a7c1d90", "NVIDIA GeForce RTX 4090", "00000000:41:00.0", 8, 9,
     24564, 12000, 87, 45, 63, 312500, 450000, 0x4, 0, 0, 0, 1024},
};

static const char* g_scenario = "";
static int g_init_count = 0;
static struct nvmlDevice_st g_devices[8] = {{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}};
static struct FakeGpu g_eight[8];
static char g_eight_uuid[8][48], g_eight_bus[8][32];

static int Scenario(const char* name) { return strcmp(g_scenario, name) == 0; }

static unsigned int DeviceCount(void) { return Scenario("no_devices") ? 0 : Scenario("eight_h200") ? 8 : 2; }

static void MakeEight(void) {
  for (int i = 0; i < 8; ++i) {
    g_eight[i] = kGpus[0];
    snprintf(g_eight_uuid[i], sizeof g_eight_uuid[i], "GPU-c6489789-7836-64bc-561f-33b9f6b86e%02d", i);
    snprintf(g_eight_bus[i], sizeof g_eight_bus[i], "00000000:%02X:00.0", 0x18 + i * 0x10);
    g_eight[i].uuid = g_eight_uuid[i];
    g_eight[i].bus_id = g_eight_bus[i];
  }
}

/* The processes of FAKE_NVML_PROCESSES on GPU `index`, at most `max`;
   returns how many, or -1 when the variable is not set. */
struct FakeProcess {
  unsigned int pid;
  unsigned long long mib;
};
static int ListedProcesses(unsigned int index, struct FakeProcess* out, int max) {
  const char* path = getenv("FAKE_NVML_PROCESSES");
  if (path == NULL || path[0] == '\0') return -1;
  FILE* file = fopen(path, "r");
  if (file == NULL) return 0;
  int n = 0;
  unsigned int gpu = 0, pid = 0;
  unsigned long long mib = 0;
  while (fscanf(file, "%u %u %llu", &gpu, &pid, &mib) == 3) {
    if (gpu != index) continue;
    if (n < max) out[n] = (struct FakeProcess){pid, mib};
    ++n;
  }
  fclose(file);
  return n < max ? n : max;
}

static const struct FakeGpu* Gpu(nvmlDevice_t device) {
  if (g_init_count == 0 || device == NULL || device->index >= DeviceCount()) return NULL;
  return Scenario("eight_h200") ? &g_eight[device->index] : &kGpus[device->index];
}

static nvmlReturn_t CopyString(char* out, unsigned int length, const char* value) {
  if (out == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  if (strlen(value) + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
  strcpy(out, value);
  return NVML_SUCCESS;
}

EXPORT int fakeNvmlInitCount(void) { return g_init_count; }

EXPORT nvmlReturn_t nvmlInit_v2(void) {
  const char* s = getenv("FAKE_NVML_SCENARIO");
  g_scenario = (s == NULL || s[0] == '\0') ? "two_gpus" : s;
  if (Scenario("mismatch")) return NVML_ERROR_LIB_RM_VERSION_MISMATCH;
  if (Scenario("no_driver")) return NVML_ERROR_DRIVER_NOT_LOADED;
  if (!Scenario("two_gpus") && !Scenario("no_devices") && !Scenario("eight_h200")) return NVML_ERROR_UNKNOWN;
  if (Scenario("eight_h200")) MakeEight();
  ++g_init_count;
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlShutdown(void) {
  if (g_init_count == 0) return NVML_ERROR_UNINITIALIZED;
  --g_init_count;
  return NVML_SUCCESS;
}

/* The real library's texts. */
EXPORT const char* nvmlErrorString(nvmlReturn_t result) {
  switch (result) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH: return "RM has detected an NVML/RM version mismatch.";
    default: return "Unknown Error";
  }
}

EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  if (g_init_count == 0) return NVML_ERROR_UNINITIALIZED;
  return CopyString(version, length, "580.159.04");
}

EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  if (g_init_count == 0) return NVML_ERROR_UNINITIALIZED;
  *count = DeviceCount();
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  if (g_init_count == 0) return NVML_ERROR_UNINITIALIZED;
  if (index >= DeviceCount() || device == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  *device = &g_devices[index];
  return NVML_SUCCESS;
}

#define GPU_OR_FAIL(device)                             \
  const struct FakeGpu* gpu = Gpu(device);              \
  if (g_init_count == 0) return NVML_ERROR_UNINITIALIZED; \
  if (gpu == NULL) return NVML_ERROR_INVALID_ARGUMENT

EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length) {
  GPU_OR_FAIL(device);
  return CopyString(uuid, length, gpu->uuid);
}

EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length) {
  GPU_OR_FAIL(device);
  return CopyString(name, length, gpu->name);
}

EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  GPU_OR_FAIL(device);
  memset(pci, 0, sizeof *pci);
  strcpy(pci->busId, gpu->bus_id);
  strncpy(pci->busIdLegacy, gpu->bus_id + 4, sizeof pci->busIdLegacy - 1);
  pci->pciDeviceId = 0x233510de;
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int* major, int* minor) {
  GPU_OR_FAIL(device);
  *major = gpu->cc_major;
  *minor = gpu->cc_minor;
  return NVML_SUCCESS;
}

/* v1 semantics: used = total - free (the driver's reservation counts as used). */
EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  GPU_OR_FAIL(device);
  memory->total = gpu->total_mib * MIB;
  memory->free = gpu->free_mib * MIB;
  struct FakeProcess listed[64];
  int n = ListedProcesses(device->index, listed, 64);
  if (n >= 0) {
    unsigned long long used = 0;
    for (int i = 0; i < n; ++i) used += listed[i].mib * MIB;
    memory->free = used < memory->total ? memory->total - used : 0;
  }
  memory->used = memory->total - memory->free;
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* util) {
  GPU_OR_FAIL(device);
  util->gpu = gpu->util_gpu;
  util->memory = gpu->util_mem;
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, int sensor, unsigned int* temp) {
  GPU_OR_FAIL(device);
  if (sensor != 0) return NVML_ERROR_INVALID_ARGUMENT;
  *temp = gpu->temp_c;
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* mw) {
  GPU_OR_FAIL(device);
  *mw = gpu->power_mw;
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int* mw) {
  GPU_OR_FAIL(device);
  *mw = gpu->limit_mw;
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long* r) {
  GPU_OR_FAIL(device);
  *r = gpu->reasons;
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device, unsigned long long* r) {
  return nvmlDeviceGetCurrentClocksEventReasons(device, r);
}

EXPORT nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, int error_type, int counter_type,
                                                unsigned long long* count) {
  GPU_OR_FAIL(device);
  if (error_type != 1 || counter_type != 0) return NVML_ERROR_INVALID_ARGUMENT; /* uncorrected, volatile */
  if (!gpu->ecc_supported) return NVML_ERROR_NOT_SUPPORTED;
  *count = gpu->ecc;
  return NVML_SUCCESS;
}

/* One process per GPU; the usual two-call protocol (size, then fill). */
EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int* count,
                                                            nvmlProcessInfo_t* infos) {
  GPU_OR_FAIL(device);
  if (count == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  struct FakeProcess listed[64];
  int n = ListedProcesses(device->index, listed, 64);
  if (n >= 0) {
    if (*count < (unsigned int)n || (n > 0 && infos == NULL)) {
      *count = (unsigned int)n;
      return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    for (int i = 0; i < n; ++i) {
      memset(&infos[i], 0, sizeof infos[i]);
      infos[i].pid = listed[i].pid;
      infos[i].usedGpuMemory = listed[i].mib * MIB;
      infos[i].gpuInstanceId = 0xFFFFFFFFu;
      infos[i].computeInstanceId = 0xFFFFFFFFu;
    }
    *count = (unsigned int)n;
    return NVML_SUCCESS;
  }
  if (*count < 1 || infos == NULL) {
    *count = 1;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  memset(infos, 0, sizeof *infos);
  infos[0].pid = gpu->pid != 0 ? gpu->pid : (unsigned int)getpid();
  infos[0].usedGpuMemory = gpu->pid_mib * MIB;
  infos[0].gpuInstanceId = 0xFFFFFFFFu;
  infos[0].computeInstanceId = 0xFFFFFFFFu;
  *count = 1;
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned int* count,
                                                            nvmlProcessInfo_t* infos) {
  return nvmlDeviceGetComputeRunningProcesses_v3(device, count, infos);
}
