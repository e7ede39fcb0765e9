#include "tests/bench/agent_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <thread>

namespace gpuctl::bench {

AgentProcess::AgentProcess(const std::string& gpuctld, const std::vector<std::string>& extra) {
  if (access(gpuctld.c_str(), X_OK) != 0) {
    throw std::runtime_error("no executable gpuctld at " + gpuctld +
                             "; build it (cmake --build build --target gpuctld) or pass --gpuctld PATH");
  }
  std::string tmpl = (std::filesystem::temp_directory_path() / "gpuctl-bench-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + tmpl);
  dir_ = tmpl;

  std::vector<std::string> argv = {gpuctld, "--listen", address(), "--state-dir", dir_ + "/state"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  std::vector<char*> cargv;
  for (std::string& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  std::string log = log_path();
  pid_t parent = getpid();

  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    // Never outlive the benchmark, even when it is killed.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd < 0 || devnull < 0) _exit(127);
    dup2(devnull, STDIN_FILENO);
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
    execv(cargv[0], cargv.data());
    _exit(127);
  }
}

AgentProcess::~AgentProcess() {
  Stop();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

bool AgentProcess::running() {
  if (reaped_) return false;
  if (waitpid(pid_, &status_, WNOHANG) == pid_) reaped_ = true;
  return !reaped_;
}

std::string AgentProcess::Stop(std::chrono::milliseconds grace) {
  if (running()) {
    kill(pid_, SIGTERM);
    auto deadline = std::chrono::steady_clock::now() + grace;
    while (running() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (running()) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status_, 0);
      reaped_ = true;
      return "killed (did not stop within " + std::to_string(grace.count()) + " ms of SIGTERM)";
    }
  }
  if (WIFEXITED(status_)) return "exit " + std::to_string(WEXITSTATUS(status_));
  if (WIFSIGNALED(status_)) return "signal " + std::to_string(WTERMSIG(status_));
  return "unknown";
}

}  // namespace gpuctl::bench
