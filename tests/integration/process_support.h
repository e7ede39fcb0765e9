// Runs the real gpuctld and gpuctl binaries for integration tests.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace gpuctl::testing {

std::string BinaryPath(const std::string& name);  // "gpuctld" -> build/daemon/gpuctld

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs to completion (killed after `timeout`), capturing stdout and stderr.
RunResult RunProgram(const std::vector<std::string>& argv,
                     const std::map<std::string, std::string>& env = {},
                     std::chrono::milliseconds timeout = std::chrono::seconds(20));

// A background process whose stderr goes to a file; killed on destruction.
class BackgroundProcess {
 public:
  BackgroundProcess(const std::vector<std::string>& argv, const std::string& stderr_path,
                    const std::map<std::string, std::string>& env = {});
  ~BackgroundProcess();
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;

  pid_t pid() const { return pid_; }
  void Signal(int sig) const;
  // Waits up to `timeout` for exit; returns the exit code, or -1 on timeout
  // (128+signal when killed by a signal).
  int WaitForExit(std::chrono::milliseconds timeout);
  bool running();

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = 0;
};

// A TCP port on 127.0.0.1 that was free a moment ago.
int FreeLoopbackPort();

// Polls `ready` every 20 ms until it is true or `timeout` passes.
bool WaitUntil(const std::function<bool()>& ready, std::chrono::milliseconds timeout);

}  // namespace gpuctl::testing
