// GrowPipeBuffer: a pipe grows to what was asked (within the kernel's limit
// for the caller), a file is left alone.
#include "agents/sys/pipe_buffer.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <unistd.h>

#include "tests/fakes/temp_dir.h"

namespace gpuctl::sys {
namespace {

TEST(GrowPipeBuffer, GrowsAPipeAndLeavesAFileAlone) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const int before = ::fcntl(fds[1], F_GETPIPE_SZ);
  const size_t after = GrowPipeBuffer(fds[1], kLogPipeBytes);
  EXPECT_EQ(static_cast<int>(after), ::fcntl(fds[1], F_GETPIPE_SZ)) << "reports the size it left";
  // 1 MiB is the default pipe-max-size: every caller may have it.
  EXPECT_GE(after, kLogPipeBytes) << "was " << before;
  EXPECT_EQ(GrowPipeBuffer(fds[1], 4096), after) << "never shrinks";
  ::close(fds[0]);
  ::close(fds[1]);

  gpuctl::testing::TempDir dir;
  dir.WriteFile("f", "x");
  int file = ::open((dir.path() + "/f").c_str(), O_WRONLY);
  ASSERT_GE(file, 0);
  EXPECT_EQ(GrowPipeBuffer(file, kLogPipeBytes), 0u);
  ::close(file);
}

}  // namespace
}  // namespace gpuctl::sys
