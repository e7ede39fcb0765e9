// inotify for the file, an eventfd for Interrupt(), one poll() on both.
#include "agents/sys/file_watch.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <string>
#include <utility>

#include "agents/sys/unique_fd.h"

namespace gpuctl::sys {
namespace {

using SteadyClock = std::chrono::steady_clock;

// Appends (MODIFY), truncation and chmod (ATTRIB), a writer closing
// (CLOSE_WRITE), and rotation or removal (MOVE_SELF, DELETE_SELF): each may
// mean there is something new, or nothing more, to read.
constexpr uint32_t kWatchMask =
    IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVE_SELF | IN_DELETE_SELF;

int PollMs(SteadyClock::time_point deadline) {
  auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - SteadyClock::now()).count();
  if (left <= 0) return 0;
  return left > 1'000'000'000 ? 1'000'000'000 : static_cast<int>(left);
}

class InotifyWaiter : public FileChangeWaiter {
 public:
  InotifyWaiter(UniqueFd inotify, UniqueFd wake) : inotify_(std::move(inotify)), wake_(std::move(wake)) {}

  bool Wait(std::chrono::milliseconds timeout) override {
    const auto deadline = SteadyClock::now() + timeout;
    while (!interrupted_.load(std::memory_order_acquire)) {
      std::array<pollfd, 2> fds{pollfd{inotify_.get(), POLLIN, 0}, pollfd{wake_.get(), POLLIN, 0}};
      int ready = ::poll(fds.data(), fds.size(), PollMs(deadline));
      if (ready < 0 && errno == EINTR) continue;
      // A failing poll would only fail again: report "no change" and let the
      // caller's own schedule decide when to look again.
      if (ready <= 0) return false;
      // The eventfd is never read, so it stays readable: every later Wait
      // returns at once, as Interrupt promises.
      if (fds[1].revents != 0) return false;
      if (fds[0].revents != 0) {
        Drain();
        return true;
      }
    }
    return false;
  }

  void Interrupt() override {
    interrupted_.store(true, std::memory_order_release);
    const uint64_t one = 1;
    // Only fails when the counter would overflow, i.e. it is readable already.
    [[maybe_unused]] ssize_t wrote = ::write(wake_.get(), &one, sizeof one);
  }

 private:
  // Many writes queue many events; one wake-up covers them all, since the
  // caller re-reads the whole file state anyway.
  void Drain() {
    alignas(struct inotify_event) std::array<char, 4096> buf;
    while (true) {
      ssize_t got = ::read(inotify_.get(), buf.data(), buf.size());
      if (got > 0) continue;
      if (got < 0 && errno == EINTR) continue;
      return;  // EAGAIN: empty (the descriptor is non-blocking)
    }
  }

  UniqueFd inotify_;
  UniqueFd wake_;
  std::atomic<bool> interrupted_{false};
};

}  // namespace

Result<std::unique_ptr<FileChangeWaiter>> WatchFile(const std::string& path) {
  UniqueFd inotify(::inotify_init1(IN_CLOEXEC | IN_NONBLOCK));
  if (!inotify.valid()) {
    int err = errno;
    std::string hint = err == EMFILE ? "; too many open files or inotify instances "
                                       "(fs.inotify.max_user_instances): raise the limit"
                                     : "";
    return IoError(ErrnoError("inotify_init1", err).message() + hint);
  }
  if (::inotify_add_watch(inotify.get(), path.c_str(), kWatchMask) < 0) {
    int err = errno;
    if (err == ENOENT) return NotFound("cannot watch '" + path + "': the file does not exist");
    if (err == ENOSPC) {
      return IoError("cannot watch '" + path +
                     "': the per-user inotify watch limit (fs.inotify.max_user_watches) is "
                     "reached; raise it with sysctl");
    }
    return ErrnoError("inotify_add_watch on '" + path + "'", err);
  }
  UniqueFd wake(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wake.valid()) return ErrnoError("eventfd", errno);
  return std::unique_ptr<FileChangeWaiter>(
      std::make_unique<InotifyWaiter>(std::move(inotify), std::move(wake)));
}

}  // namespace gpuctl::sys
