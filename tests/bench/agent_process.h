// A real gpuctld on a unix socket in a fresh temp dir, for the benchmarks.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace gpuctl::bench {

class AgentProcess {
 public:
  // Starts `gpuctld` with --listen/--state-dir in a new temp dir plus `extra`
  // flags; its output goes to <dir>/gpuctld.log. Throws std::runtime_error
  // when it cannot start. The agent inherits this process's environment (so
  // MALLOC_ARENA_MAX=2 health_bench reaches it) and dies with it.
  AgentProcess(const std::string& gpuctld, const std::vector<std::string>& extra);
  ~AgentProcess();  // Stop(), then removes the temp dir
  AgentProcess(const AgentProcess&) = delete;
  AgentProcess& operator=(const AgentProcess&) = delete;

  pid_t pid() const { return pid_; }
  std::string socket_path() const { return dir_ + "/gpuctl.sock"; }
  std::string address() const { return "unix:" + socket_path(); }
  std::string log_path() const { return dir_ + "/gpuctld.log"; }
  bool running();
  // SIGTERM, then SIGKILL after `grace`; returns the exit status text.
  std::string Stop(std::chrono::milliseconds grace = std::chrono::seconds(3));

 private:
  std::string dir_;
  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = 0;
};

}  // namespace gpuctl::bench
