// The host probe between the wire and the plain model.
#pragma once

#include "agents/health/health_sampler.h"
#include "agents/health/health_snapshot.h"
#include "agents/provision/host_probe.h"
#include "gpuctl/v1/probe.pb.h"

namespace gpuctl::daemon {

void ToProto(const provision::HostProbe& in, v1::HostProbe& out);

// What the health reading already knows about the driver: its user-space
// version (NVML's, nvidia-smi's) and each GPU's compute capability.
provision::DriverReport DriverReportFrom(const sys::GpuReport& gpus);

// Gives `options` the driver's own answers (NVML) from a fresh health
// sample; a failed sample leaves them out. `gpuctl probe` and provisioning's
// facts both take them here: without them a GPU whose PCI name is unknown
// has no compute capability.
void AddDriverAnswers(provision::ProbeOptions& options, health::HealthSampler& sampler);

// The agent's probe settings: its HOME (for ~/.venv and ~/.local/bin/uv) and
// PATH (for nvcc), from its environment.
provision::ProbeOptions DefaultProbeOptions();

}  // namespace gpuctl::daemon
