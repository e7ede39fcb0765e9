#include "agents/sys/spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
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

}  // namespace

Result<SpawnedChild> SpawnChild(const std::string& path, const std::vector<std::string>& argv,
                                const std::map<std::string, std::string>& extra_env, bool with_stdin) {
  std::vector<std::string> args = argv;
  std::vector<char*> c_args = CStrings(args);
  std::vector<std::string> env = BuildEnvironment(extra_env);
  std::vector<char*> c_env = CStrings(env);

  auto out = MakePipe();
  if (!out.ok()) return out.status();
  auto err = MakePipe();
  if (!err.ok()) return err.status();
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

  // posix_spawn, not fork: glibc clones with CLONE_VM|CLONE_VFORK, so
  // starting a child costs the same whatever the agent's (mlocked) size, no
  // code of ours runs in a copy of a multi-threaded process, and the exec's
  // errno comes back as the return value. (It also works under qemu-user,
  // where a forked child of a threaded aarch64 process can hang.)
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  struct Cleanup {
    posix_spawn_file_actions_t* actions;
    posix_spawnattr_t* attr;
    ~Cleanup() {
      posix_spawn_file_actions_destroy(actions);
      posix_spawnattr_destroy(attr);
    }
  } cleanup{&actions, &attr};
  posix_spawn_file_actions_adddup2(&actions, in.read.get(), 0);
  posix_spawn_file_actions_adddup2(&actions, out->write.get(), 1);
  posix_spawn_file_actions_adddup2(&actions, err->write.get(), 2);
  // Our descriptors are close-on-exec; this also closes any a library left open.
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  // The agent blocks SIGTERM/SIGINT to wait for them on one thread and may
  // ignore SIGPIPE; a child must start with the defaults or it cannot be
  // stopped. Its own process group lets it be killed with what it starts.
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int sig : {SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGCHLD, SIGQUIT}) sigaddset(&defaults, sig);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, static_cast<short>(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP));

  // Checked first as well: the common failures (missing, not executable)
  // get their errno even where CLONE_VFORK is emulated as a plain fork
  // (qemu-user), which leaves posix_spawn unable to report them.
  if (::access(path.c_str(), X_OK) != 0) return NotFound("cannot run '" + path + "': " + std::strerror(errno));
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, path.c_str(), &actions, &attr, c_args.data(), c_env.data());
  if (rc != 0) return NotFound("cannot run '" + path + "': " + std::strerror(rc));

  SpawnedChild child;
  child.pid = pid;
  child.stdin_write = std::move(in.write);
  child.stdout_read = std::move(out->read);
  child.stderr_read = std::move(err->read);
  return child;
}

}  // namespace gpuctl::sys
