// Between fork and exec only async-signal-safe calls are made: the agent is
// multi-threaded, and another thread may hold the allocator's lock at fork.
#include "agents/sys/spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace gpuctl::sys {
namespace {

struct Pipe {
  UniqueFd read;
  UniqueFd write;
};

// Every descriptor handed to the child is close-on-exec and numbered 3 or
// above: an agent started with stdin/stdout closed would otherwise get fd 0-2
// for a pipe, and the child's dup2 onto 0-2 would clobber it.
Status MoveAboveStdio(UniqueFd& fd) {
  if (fd.get() >= 3) return Status::Ok();
  int moved = ::fcntl(fd.get(), F_DUPFD_CLOEXEC, 3);
  if (moved < 0) return ErrnoError("fcntl(F_DUPFD_CLOEXEC)", errno);
  fd = UniqueFd(moved);
  return Status::Ok();
}

Result<Pipe> MakePipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return ErrnoError("pipe2", errno);
  Pipe p{UniqueFd(fds[0]), UniqueFd(fds[1])};
  if (Status s = MoveAboveStdio(p.read); !s.ok()) return s;
  if (Status s = MoveAboveStdio(p.write); !s.ok()) return s;
  return p;
}

// environ with `extra` entries added or replacing those of the same name.
std::vector<std::string> BuildEnvironment(const std::map<std::string, std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry(*e);
    std::string_view name = entry.substr(0, entry.find('='));
    if (extra.find(std::string(name)) == extra.end()) env.emplace_back(entry);
  }
  for (const auto& [name, value] : extra) env.push_back(name + "=" + value);
  return env;
}

std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Closes every descriptor from 3 up except `keep`. close_range is one
// syscall; the loop up to `max_fd` (sysconf, read before fork) is for
// kernels older than 5.9.
void CloseOtherFds(int keep, unsigned max_fd) {
  auto close_span = [max_fd](unsigned first, unsigned last) {
    if (first > last) return;
    if (::close_range(first, last, 0) == 0) return;
    for (unsigned fd = first; fd <= last && fd < max_fd; ++fd) ::close(static_cast<int>(fd));
  };
  unsigned k = static_cast<unsigned>(keep);
  close_span(3, k - 1);
  close_span(k + 1, ~0U);
}

unsigned MaxFd() {
  long max_fd = ::sysconf(_SC_OPEN_MAX);
  return max_fd < 0 || max_fd > 65536 ? 65536U : static_cast<unsigned>(max_fd);
}

// Runs in the child after fork: only async-signal-safe calls. Reports a
// failure as errno through `error_fd` (close-on-exec, so a successful exec
// closes it and the parent reads EOF).
[[noreturn]] void ExecChild(const char* path, char* const* argv, char* const* envp, int stdin_fd,
                            int stdout_fd, int stderr_fd, int error_fd, unsigned max_fd) {
  // The agent blocks SIGTERM/SIGINT to wait for them on one thread and may
  // ignore SIGPIPE; a child must start with the defaults or it cannot be
  // stopped.
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig : {SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGCHLD, SIGQUIT}) sigaction(sig, &dfl, nullptr);
  setpgid(0, 0);

  if (dup2(stdin_fd, 0) < 0 || dup2(stdout_fd, 1) < 0 || dup2(stderr_fd, 2) < 0) {
    int err = errno;
    (void)!write(error_fd, &err, sizeof err);
    _exit(127);
  }
  CloseOtherFds(error_fd, max_fd);
  execve(path, argv, envp);
  int err = errno;
  (void)!write(error_fd, &err, sizeof err);
  _exit(127);
}

}  // namespace

Result<SpawnedChild> SpawnChild(const std::string& path, const std::vector<std::string>& argv,
                                const std::map<std::string, std::string>& extra_env, bool with_stdin) {
  // Everything the child needs is allocated before fork.
  std::vector<std::string> args = argv;
  std::vector<char*> c_args = CStrings(args);
  std::vector<std::string> env = BuildEnvironment(extra_env);
  std::vector<char*> c_env = CStrings(env);
  const unsigned max_fd = MaxFd();

  auto out = MakePipe();
  if (!out.ok()) return out.status();
  auto err = MakePipe();
  if (!err.ok()) return err.status();
  auto exec_error = MakePipe();
  if (!exec_error.ok()) return exec_error.status();
  Pipe in;
  if (with_stdin) {
    auto p = MakePipe();
    if (!p.ok()) return p.status();
    in = std::move(*p);
  } else {
    in.read = UniqueFd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    if (!in.read.valid()) return ErrnoError("open /dev/null", errno);
    if (Status s = MoveAboveStdio(in.read); !s.ok()) return s;
  }

  pid_t pid = ::fork();
  if (pid < 0) return ErrnoError("fork for '" + path + "'", errno);
  if (pid == 0) {
    ExecChild(path.c_str(), c_args.data(), c_env.data(), in.read.get(), out->write.get(),
              err->write.get(), exec_error->write.get(), max_fd);
  }
  ::setpgid(pid, pid);  // also here, so a kill right after we return finds the group
  exec_error->write.Reset();

  // Blocks until exec succeeds (EOF: the close-on-exec end went away) or the
  // child reports why it did not.
  int child_errno = 0;
  ssize_t n;
  do {
    n = ::read(exec_error->read.get(), &child_errno, sizeof child_errno);
  } while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof child_errno)) {
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    return NotFound("cannot run '" + path + "': " + std::strerror(child_errno));
  }

  SpawnedChild child;
  child.pid = pid;
  child.stdin_write = std::move(in.write);
  child.stdout_read = std::move(out->read);
  child.stderr_read = std::move(err->read);
  return child;
}

}  // namespace gpuctl::sys
