// Everything gpuctld can be told, with every default in one place
// (convention 7). Flags and the config file fill a DaemonConfig; Validate()
// refuses bad values up front; the result is passed explicitly.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace gpuctl::daemon {

inline constexpr const char* kDefaultSocketPath = "/run/gpuctl/gpuctld.sock";
inline constexpr const char* kDefaultStateDir = "/var/lib/gpuctl";

struct ListenAddress {
  enum class Kind { kUnix, kTcp };
  Kind kind = Kind::kUnix;
  std::string path;  // unix
  std::string host;  // tcp, without brackets
  int port = 0;      // tcp; 0 lets the kernel pick (tests)
  // The form gRPC takes: "unix:/run/x.sock", "127.0.0.1:50051", "[::1]:50051".
  std::string GrpcUri() const;
};

// "unix:/abs/path" or "HOST:PORT" / "[IPV6]:PORT". Syntax only: TCP is
// served only with mutual TLS (Validate), on the literal addresses HOST
// resolves to (AgentServer).
Result<ListenAddress> ParseListenAddress(const std::string& text);

struct DaemonConfig {
  std::vector<std::string> listen = {std::string("unix:") + kDefaultSocketPath};
  std::string state_dir = kDefaultStateDir;
  std::string log_level = "info";  // trace, debug, info, warn, error
  // NVML library to dlopen; tests point this at a fake.
  std::string nvml_library = "libnvidia-ml.so.1";
  // nvidia-smi used when NVML cannot be loaded (looked up on PATH).
  std::string nvidia_smi = "nvidia-smi";
  // How long a GPU reading is reused between health samples.
  int gpu_max_age_ms = 500;
  // tmux server socket name (tmux -L) that holds the jobs' sessions.
  std::string tmux_socket = "gpuctl";
  // Proxmox: the pct tool, and where a container's root filesystem is seen
  // from the host ({vmid} is replaced).
  std::string pct = "pct";
  std::string lxc_rootfs = "/var/lib/lxc/{vmid}/rootfs";
  // Provisioning reads the host's /etc, /proc, /dev and writes /etc/profile.d
  // under this root ("/" for real; tests give a fixture tree).
  std::string provision_root = "/";
  // Open StreamLogs streams (train logs) at most; past it a client gets
  // RESOURCE_EXHAUSTED instead of the agent's memory.
  int max_log_streams = 2048;
  // The GPU queue: a GPU whose processes the agent did not start use this
  // much or more is busy (a size, "1G").
  std::string gpu_busy_below = "1G";
  // Where NVIDIA's Xid lines are read (gpu_fault_watch.h): /dev/kmsg, or a
  // file or FIFO of dmesg lines (tests); "off": the kernel log is not read.
  std::string kernel_log = "/dev/kmsg";

  // Memory guard (see README, "The memory guard").
  bool guard = true;
  std::string guard_domain = "host";  // or cgroup:PATH
  std::string guard_reserve;          // a size; empty: max(1 GiB, 3% of RAM)
  bool guard_unmanaged = false;
  std::vector<std::string> guard_protect = {"sshd", "sshd-session"};
  // Where jobs' memory cgroups go; empty: /gpuctl, or PATH/gpuctl under a
  // cgroup:PATH domain.
  std::string cgroup_parent;
  bool lock_memory = true;  // mlockall the agent

  // Mutual TLS for TCP listen addresses (PEM files). TCP is refused without
  // all three: a port is open to every local user, and the agent runs jobs
  // as root. Clients must present a certificate signed by tls_client_ca.
  std::string tls_cert;
  std::string tls_key;
  std::string tls_client_ca;
  bool tls() const { return !tls_cert.empty() || !tls_key.empty() || !tls_client_ca.empty(); }

  // Prometheus /metrics on HOST:PORT; empty: not served. Loopback is served
  // plain; any other address only with the mutual TLS above.
  std::string metrics_listen;
};

// 127.0.0.0/8, ::1 or localhost: reachable from this host only.
bool IsLoopbackHost(const std::string& host);

// Reads a JSON config file: keys as in DaemonConfig ("listen" is a list).
// Unknown keys are refused so typos do not pass silently; a value of the
// wrong type is refused naming its key, the type it needs and what it got.
Status LoadConfigFile(const std::string& path, DaemonConfig& config);

// Every key the config file takes and its type as the README names it:
// "string", "integer", "boolean", "array of strings".
struct ConfigFileKey {
  const char* name;
  const char* type;
};
std::vector<ConfigFileKey> ConfigFileKeys();

// Checks every field; the message names the field and the fix.
Status Validate(const DaemonConfig& config);

}  // namespace gpuctl::daemon
