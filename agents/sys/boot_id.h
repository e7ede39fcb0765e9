// This kernel's boot id (/proc/sys/kernel/random/boot_id): the same for every
// process on one host and boot, containers included, and another on any other
// host or boot. Two processes with the same one share a kernel, so a device
// and inode one of them names is the same file for the other.
#pragma once

#include <string>

namespace gpuctl::sys {

// Empty when it cannot be read.
std::string BootId();

}  // namespace gpuctl::sys
