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
 *   row_remap_pending   two_gpus, but GPU 0's nvmlDeviceGetRemappedRows says
 *                       isPending=1 (one row remapped for an uncorrectable
 *                       error, waiting for a GPU reset).
 *   row_remap_failure   two_gpus, but GPU 0's says failureOccurred=1.
 *   retired_pages_pending  two_gpus, but nvmlDeviceGetRetiredPagesPendingStatus
 *                       answers (as a pre-Ampere GPU would): GPU 0 ENABLED
 *                       (pages pending), GPU 1 DISABLED.
 *   gpu_lost            two_gpus, but GPU 1 fell off the bus after init: its
 *                       handle is still given, and every nvmlDeviceGet* query
 *                       of it returns NVML_ERROR_GPU_IS_LOST.
 * Memory-repair answers otherwise follow the capture: the H200 remaps rows
 * (none pending, no failure; nvidia-smi -q shows remapped_rows 0/No/No) and
 * has no page retirement (retired pages N/A: NOT_SUPPORTED); the GeForce has
 * neither (NOT_SUPPORTED).
 * Anything else makes nvmlInit_v2 return NVML_ERROR_UNKNOWN, so a typo in a
 * test shows.
 *
 * FAKE_NVML_PROCESSES, a file read at every query (so a test can change it
 * while the agent runs): lines "GPU_INDEX PID MIB", the compute processes
 * and their memory. When set, it replaces each GPU's one process, and a
 * GPU's used memory is the sum of its processes (free = total - used).
 *
 * fakeNvmlInitCount() (not an NVML function) lets tests check that readers
 * shut NVML down. fakeNvmlLoseGpu(index) (not NVML either) makes that GPU
 * lost from then on, as gpu_lost does to GPU 1, until the next nvmlInit_v2.
 *
 * Built twice: libnvidia-ml.so.1 in tests/fake_nvml, and in
 * tests/fake_nvml_old with FAKE_NVML_WITHOUT_FAULT_QUERIES, an older driver
 * that exports neither nvmlDeviceGetRetiredPagesPendingStatus nor
 * nvmlDeviceGetRemappedRows (scenarios as above).
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
  NVML_ERROR_GPU_IS_LOST = 15,
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

typedef enum { NVML_FEATURE_DISABLED = 0, NVML_FEATURE_ENABLED = 1 } nvmlEnableState_t;

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

static unsigned int g_lost_mask = 0; /* bit i: GPU i is lost */

static int Lost(nvmlDevice_t device) { return device != NULL && device->index < 32 && (g_lost_mask >> device->index) & 1u; }

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

EXPORT void fakeNvmlLoseGpu(unsigned int index) {
  if (index < 32) g_lost_mask |= 1u << index;
}

EXPORT nvmlReturn_t nvmlInit_v2(void) {
  const char* s = getenv("FAKE_NVML_SCENARIO");
  g_scenario = (s == NULL || s[0] == '\0') ? "two_gpus" : s;
  if (Scenario("mismatch")) return NVML_ERROR_LIB_RM_VERSION_MISMATCH;
  if (Scenario("no_driver")) return NVML_ERROR_DRIVER_NOT_LOADED;
  static const char* const kKnown[] = {"two_gpus",          "no_devices",        "eight_h200",
                                       "row_remap_pending", "row_remap_failure", "retired_pages_pending",
                                       "gpu_lost"};
  int known = 0;
  for (size_t i = 0; i < sizeof kKnown / sizeof kKnown[0]; ++i) known |= Scenario(kKnown[i]);
  if (!known) return NVML_ERROR_UNKNOWN;
  g_lost_mask = Scenario("gpu_lost") ? 1u << 1 : 0u;
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
    case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
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
  if (gpu == NULL) return NVML_ERROR_INVALID_ARGUMENT;  \
  if (Lost(device)) return NVML_ERROR_GPU_IS_LOST

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

#ifndef FAKE_NVML_WITHOUT_FAULT_QUERIES
/* Page retirement is pre-Ampere: NOT_SUPPORTED unless the scenario says. */
EXPORT nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t device, nvmlEnableState_t* isPending) {
  GPU_OR_FAIL(device);
  if (isPending == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  if (!Scenario("retired_pages_pending")) return NVML_ERROR_NOT_SUPPORTED;
  *isPending = device->index == 0 ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
  return NVML_SUCCESS;
}

/* Row remapping: the H200s (the GPUs with ECC) have it, the GeForce not. */
EXPORT nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t device, unsigned int* corrRows, unsigned int* uncRows,
                                              unsigned int* isPending, unsigned int* failureOccurred) {
  GPU_OR_FAIL(device);
  if (corrRows == NULL || uncRows == NULL || isPending == NULL || failureOccurred == NULL) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  if (!gpu->ecc_supported) return NVML_ERROR_NOT_SUPPORTED;
  int first = device->index == 0;
  *corrRows = 0;
  *uncRows = first && Scenario("row_remap_pending") ? 1 : 0;
  *isPending = first && Scenario("row_remap_pending") ? 1 : 0;
  *failureOccurred = first && Scenario("row_remap_failure") ? 1 : 0;
  return NVML_SUCCESS;
}
#endif /* FAKE_NVML_WITHOUT_FAULT_QUERIES */
