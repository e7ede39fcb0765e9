// fork/exec CommandRunner (the fork/exec itself is SpawnChild). The child
// runs in its own process group so a timeout kills it together with anything
// it started (a shell's children would otherwise keep our pipes open).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdlib>

#include "agents/sys/command_runner.h"
#include "agents/sys/spawn.h"

namespace gpuctl::sys {
namespace {

using Clock = std::chrono::steady_clock;

// Used when the agent runs without PATH (systemd gives one, a bare exec may not).
constexpr const char* kDefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

void SetNonBlocking(int fd) {
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

// Writing to a child that closed its stdin raises SIGPIPE, which would end
// the agent. Block it on this thread while writing and swallow the one we
// caused (SIGPIPE from a pipe write is sent to the writing thread).
class ScopedSigpipeBlock {
 public:
  ScopedSigpipeBlock() {
    sigemptyset(&pipe_set_);
    sigaddset(&pipe_set_, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_set_, &old_);
  }
  ~ScopedSigpipeBlock() {
    if (!was_pending_) {
      timespec zero{};
      while (sigtimedwait(&pipe_set_, nullptr, &zero) == SIGPIPE) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  ScopedSigpipeBlock(const ScopedSigpipeBlock&) = delete;
  ScopedSigpipeBlock& operator=(const ScopedSigpipeBlock&) = delete;

 private:
  sigset_t pipe_set_;
  sigset_t old_;
  bool was_pending_ = false;
};

int RemainingMs(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  if (left <= 0) return 0;
  return left > 1'000'000 ? 1'000'000 : static_cast<int>(left);
}

void KillGroup(pid_t pid) {
  ::kill(-pid, SIGKILL);
  ::kill(pid, SIGKILL);  // in case setpgid had not run yet
}

class SubprocessRunner : public CommandRunner {
 public:
  Result<CommandOutput> Run(const std::vector<std::string>& argv, const RunOptions& options) override;
};

Result<CommandOutput> SubprocessRunner::Run(const std::vector<std::string>& argv,
                                            const RunOptions& options) {
  if (argv.empty() || argv[0].empty()) return InvalidArgument("empty command");

  std::string path = argv[0];
  if (path.find('/') == std::string::npos) {
    // The child's PATH decides, as execvp would with the child's environment.
    auto env_path = options.env.find("PATH");
    const char* parent_path = std::getenv("PATH");
    std::string search = env_path != options.env.end() ? env_path->second
                         : parent_path != nullptr   ? parent_path
                                                    : kDefaultPath;
    path = FindExecutable(argv[0], search);
    if (path.empty()) {
      return NotFound("'" + argv[0] + "' not found on PATH (" + search +
                      "); install it or give its absolute path");
    }
  }

  auto child = SpawnChild(path, argv, options.env, options.stdin_text.has_value());
  if (!child.ok()) return child.status();
  const pid_t pid = child->pid;
  UniqueFd& stdin_write = child->stdin_write;

  CommandOutput result;
  std::string_view to_write = options.stdin_text ? std::string_view(*options.stdin_text) : "";
  if (stdin_write.valid()) {
    SetNonBlocking(stdin_write.get());
    if (to_write.empty()) stdin_write.Reset();
  }
  SetNonBlocking(child->stdout_read.get());
  SetNonBlocking(child->stderr_read.get());

  const auto deadline = Clock::now() + options.timeout;
  std::array<char, 16384> buf;
  bool timed_out = false;
  std::string* sinks[2] = {&result.stdout_text, &result.stderr_text};
  UniqueFd* sources[2] = {&child->stdout_read, &child->stderr_read};
  while (sources[0]->valid() || sources[1]->valid() || stdin_write.valid()) {
    std::array<pollfd, 3> fds{};
    nfds_t count = 0;
    for (UniqueFd* src : sources) {
      fds[count++] = pollfd{src->valid() ? src->get() : -1, POLLIN, 0};
    }
    fds[count++] = pollfd{stdin_write.valid() ? stdin_write.get() : -1, POLLOUT, 0};
    int wait_ms = RemainingMs(deadline);
    if (wait_ms == 0) {
      timed_out = true;
      break;
    }
    int ready = ::poll(fds.data(), count, wait_ms);
    if (ready < 0) {
      if (errno == EINTR) continue;
      KillGroup(pid);
      ::waitpid(pid, nullptr, 0);
      return ErrnoError("poll on the pipes of '" + argv[0] + "'", errno);
    }
    for (size_t i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      ssize_t got = ::read(fds[i].fd, buf.data(), buf.size());
      if (got > 0) {
        // Past the cap the bytes are read and dropped so the child never
        // blocks on a full pipe.
        size_t room = options.max_output_bytes - std::min(options.max_output_bytes, sinks[i]->size());
        sinks[i]->append(buf.data(), std::min(room, static_cast<size_t>(got)));
      } else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
        sources[i]->Reset();
      }
    }
    if (fds[2].fd >= 0 && fds[2].revents != 0) {
      ScopedSigpipeBlock no_sigpipe;
      ssize_t wrote = ::write(fds[2].fd, to_write.data(), to_write.size());
      if (wrote > 0) to_write.remove_prefix(static_cast<size_t>(wrote));
      if (to_write.empty() || (wrote < 0 && errno != EAGAIN && errno != EINTR)) stdin_write.Reset();
    }
  }
  stdin_write.Reset();
  sources[0]->Reset();
  sources[1]->Reset();

  // The pipes are closed; the child normally exits at once. It may still run
  // (it closed its outputs), so keep to the deadline.
  int status = 0;
  int backoff_ms = 1;
  while (!timed_out) {
    pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) return ErrnoError("waitpid for '" + argv[0] + "'", errno);
    int wait_ms = RemainingMs(deadline);
    if (wait_ms == 0) {
      timed_out = true;
      break;
    }
    ::poll(nullptr, 0, std::min(wait_ms, backoff_ms));
    backoff_ms = std::min(backoff_ms * 2, 50);
  }
  if (timed_out) {
    KillGroup(pid);
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    return Unavailable("'" + argv[0] + "' did not finish within " +
                       std::to_string(options.timeout.count()) + " ms and was killed");
  }
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.exit_code = -1;
    result.term_signal = WTERMSIG(status);
  }
  return result;
}

}  // namespace

std::unique_ptr<CommandRunner> MakeSubprocessRunner() { return std::make_unique<SubprocessRunner>(); }

std::string FindExecutable(const std::string& name, const std::string& path_env) {
  auto runnable = [](const std::string& candidate) {
    struct stat st {};
    return ::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
           ::access(candidate.c_str(), X_OK) == 0;
  };
  if (name.empty()) return {};
  if (name.find('/') != std::string::npos) return runnable(name) ? name : std::string();
  size_t start = 0;
  while (start <= path_env.size()) {
    size_t end = path_env.find(':', start);
    if (end == std::string::npos) end = path_env.size();
    std::string dir = path_env.substr(start, end - start);
    // An empty entry means the current directory to a shell; a daemon must
    // not run whatever lies in its working directory, so it is skipped.
    if (!dir.empty()) {
      std::string candidate = dir + (dir.back() == '/' ? "" : "/") + name;
      if (runnable(candidate)) return candidate;
    }
    start = end + 1;
  }
  return {};
}

}  // namespace gpuctl::sys
