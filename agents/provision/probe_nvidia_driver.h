// The NVIDIA driver in two halves that must agree: the loaded kernel module
// and the user-space library (NVML). After an upgrade without a reboot they
// differ, and every CUDA program fails with "Driver/library version
// mismatch". Pure parsers.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gpuctl::provision {

struct NvidiaKernelModule {
  std::string version;  // "580.159.04"
  bool open = false;    // the open kernel modules (required on Blackwell) vs the proprietary one
};

// The first line of /proc/driver/nvidia/version, whichever layout the driver
// uses:
//   NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (...)  Thu ...
//   NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.14  Thu Feb 22 01:44:30 UTC 2024
// The version is the first dotted number after "NVRM version:"; the module is
// open when the words before it include "Open". nullopt without that line.
std::optional<NvidiaKernelModule> ParseNvidiaKernelModule(std::string_view text);

// /sys/module/nvidia/version: just "580.159.04\n". nullopt unless it is a
// dotted number.
std::optional<std::string> ParseModuleVersionFile(std::string_view text);

// The user-space version from the library's file name:
// "libnvidia-ml.so.580.159.04" -> "580.159.04"; nullopt for the soname link
// "libnvidia-ml.so.1" and other names.
std::optional<std::string> NvmlLibraryVersionFromFileName(std::string_view file_name);

// `nvidia-smi --query-gpu=driver_version --format=csv,noheader`: one line per
// GPU, all the same; the first. nullopt when it printed no version (an error
// message, nothing).
std::optional<std::string> ParseNvidiaSmiDriverVersion(std::string_view text);

// A driver version: digits and dots, starting and ending with a digit, at
// least one dot ("580.159.04", "555.58").
bool IsDottedVersion(std::string_view text);

}  // namespace gpuctl::provision
