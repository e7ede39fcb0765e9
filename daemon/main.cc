// gpuctld's composition root: parse flags, build the parts, serve, and shut
// down on SIGTERM/SIGINT. Logic lives in the libraries, not here.
#include <unistd.h>

#include <cstdio>
#include <iostream>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "agents/health/health_sampler.h"
#include "agents/sys/clock.h"
#include "agents/sys/command_runner.h"
#include "agents/sys/files.h"
#include "agents/sys/gpu_reader.h"
#include "agents/sys/host_fs.h"
#include "agents/sys/process_control.h"
#include "agents/sys/shutdown_signal.h"
#include "agents/sys/tmux.h"
#include "agents/train/job_supervisor.h"
#include "daemon/config/flags.h"
#include "daemon/server/agent_server.h"
#include "daemon/service/agent_service.h"

namespace {

constexpr int kExitUsage = 2;
constexpr int kExitStartFailed = 1;

void SetUpLogging(const std::string& level) {
  // Colours only for a person at a terminal; journald and files get plain text.
  auto logger = isatty(STDERR_FILENO) ? spdlog::stderr_color_mt("gpuctld")
                                      : spdlog::stderr_logger_mt("gpuctld");
  if (!isatty(STDERR_FILENO)) logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %l %v");
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::from_str(level));
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gpuctl;
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

  if (Status s = sys::EnsureDir(config.state_dir, 0700); !s.ok()) {
    spdlog::error("cannot use --state-dir: {}", s.message());
    return kExitStartFailed;
  }

  sys::RealClock clock;
  sys::HostFs host_fs;
  std::unique_ptr<sys::CommandRunner> runner = sys::MakeSubprocessRunner();
  std::unique_ptr<sys::GpuReader> gpu_reader =
      sys::MakeGpuReader({.nvml_library = config.nvml_library, .nvidia_smi = config.nvidia_smi}, *runner);
  health::HealthSampler sampler(host_fs, *gpu_reader, clock,
                                std::chrono::milliseconds(config.gpu_max_age_ms));
  daemon::HealthWatchHub health_hub([&] { return daemon::SampleHealthProto(sampler); }, clock);
  std::unique_ptr<sys::Tmux> tmux = sys::MakeTmux(*runner, config.tmux_socket);
  std::unique_ptr<sys::ProcessControl> processes = sys::MakeProcessControl(host_fs);
  train::JobSupervisor jobs({.state_dir = config.state_dir,
                             .lxc_rootfs_template = config.lxc_rootfs,
                             .pct = config.pct},
                            *tmux, *processes, *runner, clock);
  jobs.Start();
  daemon::WorkQueue slow_calls(/*workers=*/2, /*max_queued=*/32);
  daemon::AgentService agent_service(sampler, health_hub, jobs, slow_calls);

  Result<std::unique_ptr<daemon::AgentServer>> server =
      daemon::AgentServer::Start(config, {&agent_service});
  if (!server.ok()) {
    spdlog::error("{}", server.status().message());
    return kExitStartFailed;
  }
  for (const std::string& addr : (*server)->bound()) spdlog::info("gpuctld {} serving on {}", GPUCTL_VERSION, addr);

  int sig = sys::WaitForShutdownSignal();
  spdlog::info("received signal {}, shutting down", sig);
  // Streams first (they would hold the server open), then the server with a
  // deadline well inside the 2 s promise.
  health_hub.Stop();
  (*server)->Shutdown(clock.WallNow() + std::chrono::milliseconds(1000));
  slow_calls.Shutdown();
  jobs.Shutdown();  // the jobs themselves keep running in tmux
  spdlog::info("stopped");
  spdlog::shutdown();
  return 0;
}
