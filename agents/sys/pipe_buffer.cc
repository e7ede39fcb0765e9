#include "agents/sys/pipe_buffer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>

namespace gpuctl::sys {

size_t GrowPipeBuffer(int fd, size_t bytes) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode)) return 0;
  const int now = ::fcntl(fd, F_GETPIPE_SZ);
  if (now < 0) return 0;
  if (static_cast<size_t>(now) >= bytes || bytes > INT_MAX) return static_cast<size_t>(now);
  const int grown = ::fcntl(fd, F_SETPIPE_SZ, static_cast<int>(bytes));
  return static_cast<size_t>(grown > 0 ? grown : now);
}

size_t GrowStdoutPipe() { return GrowPipeBuffer(STDOUT_FILENO, kLogPipeBytes); }

}  // namespace gpuctl::sys
