#include "daemon/config/flags.h"

#include <CLI/CLI.hpp>

#include <optional>

namespace gpuctl::daemon {

Result<FlagsOutcome> ParseDaemonFlags(int argc, const char* const* argv) {
  FlagsOutcome outcome;
  DaemonConfig defaults;
  CLI::App app{
      "gpuctld: the gpuctl host agent. It samples host and GPU health, runs training jobs\n"
      "detached in tmux, and guards the host's memory. The gpuctl client talks to it over\n"
      "a unix socket (default " + std::string(kDefaultSocketPath) + ") or TCP with mutual TLS.\n"
      "gpuctld --bridge SOCKET copies between stdin/stdout and SOCKET, nothing else: gpuctl's way to\n"
      "an agent over SSH where the socket cannot be forwarded.",
      "gpuctld"};
  app.set_version_flag("--version", std::string("gpuctld ") + GPUCTL_VERSION);

  std::string config_file;
  std::vector<std::string> listen;
  std::string state_dir, log_level, nvml_library, nvidia_smi, tmux_socket, pct, lxc_rootfs, provision_root;
  std::string guard, guard_domain, guard_reserve, cgroup_parent;
  std::string tls_cert, tls_key, tls_client_ca, metrics_listen;
  std::vector<std::string> guard_protect;
  bool guard_unmanaged = false, no_lock_memory = false;
  std::optional<int> max_log_streams;
  std::string gpu_busy_below, kernel_log;
  app.add_option("--config", config_file, "JSON config file; flags override its values")
      ->check(CLI::ExistingFile);
  app.add_option("--listen", listen,
                 "Address to serve, repeatable: unix:PATH or HOST:PORT (TCP needs the --tls-* flags)\n"
                 "default: unix:" + std::string(kDefaultSocketPath));
  app.add_option("--state-dir", state_dir, "Where jobs and logs are kept (default " +
                                               std::string(kDefaultStateDir) + ")");
  app.add_option("--log-level", log_level, "trace, debug, info, warn or error (default info)");
  app.add_option("--nvml-library", nvml_library,
                 "NVML library to load (default libnvidia-ml.so.1); for tests and odd installs");
  app.add_option("--nvidia-smi", nvidia_smi, "nvidia-smi used when NVML is missing (default: from PATH)");
  app.add_option("--tmux-socket", tmux_socket, "tmux server socket name for the jobs' sessions (default gpuctl)");
  app.add_option("--pct", pct, "Proxmox pct tool for --container jobs (default: pct from PATH)");
  app.add_option("--lxc-rootfs", lxc_rootfs,
                 "Where an LXC container's root filesystem is seen from the host (default /var/lib/lxc/{vmid}/rootfs)");
  app.add_option("--provision-root", provision_root,
                 "Root under which provisioning reads /etc, /proc, /dev and writes /etc/profile.d (default /; for tests)");

  app.add_option("--max-log-streams", max_log_streams,
                 "Open 'train logs' streams at most; more get RESOURCE_EXHAUSTED (default 2048)");
  app.add_option("--gpu-busy-below", gpu_busy_below,
                 "The GPU queue counts a GPU busy when processes gpuctl did not start use this much of it "
                 "(default 1G)");
  app.add_option("--kernel-log", kernel_log,
                 "Where NVIDIA Xid lines are read: /dev/kmsg (default), a file or FIFO of dmesg lines, or off.\n"
                 "A Xid the GPU is to blame for (79, 48, 94, 95, 63, 64, 74, 119, 120, 154) drains it");
  app.add_option("--guard", guard, "Memory guard: on or off (default on)")->check(CLI::IsMember({"on", "off"}));
  app.add_option("--guard-domain", guard_domain,
                 "What the guard watches: host (MemAvailable) or cgroup:PATH (that cgroup's usage\n"
                 "against its limit, e.g. an LXC container's cgroup)");
  app.add_option("--guard-reserve", guard_reserve,
                 "Kill line: available memory kept free (e.g. 2G; default max(1 GiB, 3% of RAM))");
  app.add_flag("--guard-unmanaged", guard_unmanaged,
               "Also kill processes the agent did not start (by oom_score) when no job is left to kill");
  app.add_option("--guard-protect", guard_protect,
                 "Process names never killed and given a low oom_score_adj (repeatable; default sshd, sshd-session)");
  app.add_option("--cgroup-parent", cgroup_parent, "Memory cgroup under which each job gets its own (default /gpuctl)");
  app.add_option("--tls-cert", tls_cert, "PEM certificate the agent presents on TCP listen addresses");
  app.add_option("--tls-key", tls_key, "PEM private key of --tls-cert (keep it 0600)");
  app.add_option("--tls-client-ca", tls_client_ca,
                 "PEM CA certificate(s); TCP clients must present a certificate signed by one of them");
  app.add_option("--metrics-listen", metrics_listen,
                 "Serve Prometheus metrics at http://HOST:PORT/metrics (e.g. 127.0.0.1:9400); an address other\n"
                 "hosts can reach needs the --tls-* flags and is served over HTTPS with client certificates");
  app.add_flag("--no-lock-memory", no_lock_memory, "Do not mlockall the agent (for tests without CAP_IPC_LOCK)");

  // A flag given twice takes its last value, as most daemons do (--listen,
  // a list, keeps them all).
  for (const char* name : {"--config", "--state-dir", "--log-level", "--nvml-library", "--nvidia-smi", "--tmux-socket", "--pct",
                           "--lxc-rootfs", "--provision-root", "--max-log-streams", "--gpu-busy-below", "--kernel-log", "--guard", "--guard-domain", "--guard-reserve", "--cgroup-parent",
                           "--tls-cert", "--tls-key", "--tls-client-ca", "--metrics-listen"}) {
    app.get_option(name)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    outcome.print_and_exit = app.help();
    return outcome;
  } catch (const CLI::CallForVersion&) {
    outcome.print_and_exit = app.version() + "\n";
    return outcome;
  } catch (const CLI::ParseError& e) {
    return InvalidArgument(std::string(e.what()) + "\nRun 'gpuctld --help' for the flags.");
  }

  DaemonConfig& config = outcome.config;
  if (!config_file.empty()) {
    if (Status s = LoadConfigFile(config_file, config); !s.ok()) return s;
  }
  if (!listen.empty()) config.listen = listen;
  if (!state_dir.empty()) config.state_dir = state_dir;
  if (!log_level.empty()) config.log_level = log_level;
  if (!nvml_library.empty()) config.nvml_library = nvml_library;
  if (!nvidia_smi.empty()) config.nvidia_smi = nvidia_smi;
  if (!tmux_socket.empty()) config.tmux_socket = tmux_socket;
  if (!pct.empty()) config.pct = pct;
  if (!lxc_rootfs.empty()) config.lxc_rootfs = lxc_rootfs;
  if (!provision_root.empty()) config.provision_root = provision_root;
  if (max_log_streams) config.max_log_streams = *max_log_streams;
  if (!gpu_busy_below.empty()) config.gpu_busy_below = gpu_busy_below;
  if (!kernel_log.empty()) config.kernel_log = kernel_log;
  if (!guard.empty()) config.guard = guard == "on";
  if (!guard_domain.empty()) config.guard_domain = guard_domain;
  if (!guard_reserve.empty()) config.guard_reserve = guard_reserve;
  if (guard_unmanaged) config.guard_unmanaged = true;
  if (!guard_protect.empty()) config.guard_protect = guard_protect;
  if (!cgroup_parent.empty()) config.cgroup_parent = cgroup_parent;
  if (no_lock_memory) config.lock_memory = false;
  if (!tls_cert.empty()) config.tls_cert = tls_cert;
  if (!tls_key.empty()) config.tls_key = tls_key;
  if (!tls_client_ca.empty()) config.tls_client_ca = tls_client_ca;
  if (!metrics_listen.empty()) config.metrics_listen = metrics_listen;
  if (Status s = Validate(config); !s.ok()) return s;
  return outcome;
}

}  // namespace gpuctl::daemon
