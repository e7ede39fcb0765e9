// A larger kernel buffer for a pipe we write to: `gpuctl train logs | cat`
// ran at 0.47x `tail -c +1 | cat` with the default 64 KiB pipe, the client
// waking the reader (and being woken) every 64 KiB; with 1 MiB it keeps pace.
#pragma once

#include <cstddef>

namespace gpuctl::sys {

inline constexpr size_t kLogPipeBytes = size_t{1} << 20;

// When `fd` is a pipe, asks the kernel to buffer up to `bytes` in it
// (F_SETPIPE_SZ; unprivileged callers are held to /proc/sys/fs/pipe-max-size,
// 1 MiB by default). Returns the pipe's size after, 0 when `fd` is no pipe or
// its size cannot be read. A refusal leaves the pipe as it was.
size_t GrowPipeBuffer(int fd, size_t bytes);
// GrowPipeBuffer for standard output, to kLogPipeBytes.
size_t GrowStdoutPipe();

}  // namespace gpuctl::sys
