// gpuctld: parse flags, take the state dir, start the agent's parts
// (daemon/server/agent_runtime.h), serve, and stop them on SIGTERM/SIGINT.
// Logic lives in the libraries, not here.
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "agents/sys/shutdown_signal.h"
#include "agents/sys/systemd_notify.h"
#include "agents/sys/terminal.h"
#include "agents/sys/unix_bridge.h"
#include "daemon/config/flags.h"
#include "daemon/server/agent_runtime.h"
#include "daemon/server/agent_startup.h"

namespace {

using gpuctl::daemon::kExitStartFailed;
using gpuctl::daemon::kExitUsage;

void SetUpLogging(const std::string& level) {
  // Colours only for a person at a terminal; journald and files get plain text.
  const bool terminal = gpuctl::sys::StderrIsTerminal();
  auto logger = terminal ? spdlog::stderr_color_mt("gpuctld") : spdlog::stderr_logger_mt("gpuctld");
  if (!terminal) logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %l %v");
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::from_str(level));
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gpuctl;
  // gpuctld --bridge SOCKET: the client's way to the agent over an SSH exec
  // channel (see unix_bridge.h). Not the agent itself: nothing else starts.
  if (argc == 3 && std::string_view(argv[1]) == "--bridge") {
    Status s = sys::BridgeUnixSocketToStdio(argv[2]);
    if (!s.ok()) std::cerr << "gpuctld --bridge: " << s.message() << "\n";
    return s.ok() ? 0 : kExitStartFailed;
  }
  // Before any thread exists, so all inherit the mask (see shutdown_signal.h).
  sys::BlockShutdownSignals();

  Result<daemon::FlagsOutcome> flags = daemon::ParseDaemonFlags(argc, argv);
  if (!flags.ok()) {
    std::cerr << "gpuctld: " << flags.status().message() << "\n";
    return kExitUsage;
  }
  if (!flags->print_and_exit.empty()) {
    std::cout << flags->print_and_exit;
    return 0;
  }
  const daemon::DaemonConfig& config = flags->config;
  SetUpLogging(config.log_level);

  // One agent per state directory, held until exit.
  Result<sys::PidLock> state_lock = daemon::LockStateDir(config.state_dir);
  if (!state_lock.ok()) {
    spdlog::error("{}", state_lock.status().message());
    return daemon::StartExitCode(state_lock.status());
  }

  Result<std::unique_ptr<daemon::AgentRuntime>> runtime = daemon::AgentRuntime::Start(config);
  if (!runtime.ok()) {
    spdlog::error("{}", runtime.status().message());
    return daemon::StartExitCode(runtime.status());
  }
  sys::NotifyReady();

  int sig = sys::WaitForShutdownSignal();
  spdlog::info("received signal {}, shutting down", sig);
  sys::NotifyStopping();
  if ((*runtime)->Stop() == daemon::AgentRuntime::Stopped::kProvisioningStillRunning) {
    // The run's thread still uses the runner, the supervisor and the stream;
    // destroying them under it would be undefined. Nothing is left to save
    // (state.json is written at each step), so leave without destructors.
    spdlog::warn("a provisioning command is still running; it is left to finish on its own");
    spdlog::shutdown();
    std::_Exit(0);
  }
  spdlog::info("stopped");
  spdlog::shutdown();
  return 0;
}
