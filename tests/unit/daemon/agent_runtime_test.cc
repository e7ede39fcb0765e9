// AgentRuntime::Start refuses a start the guard's plan refuses before any
// thread or server is started, with the exit code main() returns. Reads the
// real /proc/meminfo (read-only); the state dir is a temp dir.
#include "daemon/server/agent_runtime.h"

#include <gtest/gtest.h>

#include "daemon/server/agent_startup.h"
#include "tests/fakes/temp_dir.h"

namespace gpuctl::daemon {
namespace {

TEST(AgentRuntime, AReserveLargerThanTheHostRefusesTheStartAsTheUsers) {
  testing::TempDir dir;
  DaemonConfig config;
  config.state_dir = dir.path();
  config.tmux_socket = "gpuctl-unit-runtime";
  config.guard = true;
  config.guard_reserve = "1P";
  Result<std::unique_ptr<AgentRuntime>> runtime = AgentRuntime::Start(config);
  ASSERT_FALSE(runtime.ok());
  EXPECT_EQ(runtime.status().message().rfind("memory guard: ", 0), 0u) << runtime.status().message();
  EXPECT_EQ(StartExitCode(runtime.status()), kExitUsage);
}

}  // namespace
}  // namespace gpuctl::daemon
