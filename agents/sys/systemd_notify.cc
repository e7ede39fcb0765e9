#include "agents/sys/systemd_notify.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <condition_variable>
#include <mutex>
#include <cstdlib>
#include <cstring>
#include <string>

namespace gpuctl::sys {
namespace {

std::optional<long long> ParsePositive(const char* text) {
  if (text == nullptr || *text == '\0') return std::nullopt;
  long long value = 0;
  const char* end = text + std::strlen(text);
  auto [ptr, ec] = std::from_chars(text, end, value);
  if (ec != std::errc() || ptr != end || value <= 0) return std::nullopt;
  return value;
}

void NotifyFromEnvironment(std::string_view state) {
  const char* socket = std::getenv("NOTIFY_SOCKET");
  // Best effort, as sd_notify: a lost datagram only delays readiness or
  // a watchdog beat, and there is nobody to tell.
  (void)SendNotify(socket ? socket : "", state);
}

}  // namespace

Status SendNotify(std::string_view notify_socket, std::string_view state) {
  if (notify_socket.empty()) return Status::Ok();
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (notify_socket.front() != '/' && notify_socket.front() != '@') {
    return InvalidArgument("NOTIFY_SOCKET must be an absolute path or start with '@', got '" +
                           std::string(notify_socket) + "'");
  }
  if (notify_socket.size() >= sizeof addr.sun_path) {
    return InvalidArgument("NOTIFY_SOCKET is longer than a unix socket path can be");
  }
  std::memcpy(addr.sun_path, notify_socket.data(), notify_socket.size());
  if (addr.sun_path[0] == '@') addr.sun_path[0] = '\0';  // abstract namespace
  socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + notify_socket.size());

  int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return ErrnoError("cannot make a socket for sd_notify", errno);
  ssize_t sent = ::sendto(fd, state.data(), state.size(), MSG_NOSIGNAL, reinterpret_cast<sockaddr*>(&addr), len);
  int err = errno;
  ::close(fd);
  if (sent < 0) return ErrnoError("cannot notify systemd at " + std::string(notify_socket), err);
  return Status::Ok();
}

std::optional<std::chrono::microseconds> ParseWatchdogUsec(const char* usec, const char* pid, long self_pid) {
  std::optional<long long> value = ParsePositive(usec);
  if (!value) return std::nullopt;
  if (pid != nullptr && *pid != '\0') {
    std::optional<long long> for_pid = ParsePositive(pid);
    if (!for_pid || *for_pid != self_pid) return std::nullopt;
  }
  return std::chrono::microseconds(*value);
}

WatchdogFeeder::WatchdogFeeder(std::chrono::microseconds interval)
    : thread_([interval](std::stop_token stop) {
        std::mutex mutex;
        std::condition_variable_any wake;
        std::unique_lock lock(mutex);
        while (!stop.stop_requested()) {
          NotifyWatchdog();
          wake.wait_for(lock, stop, interval, [] { return false; });
        }
      }) {}

WatchdogFeeder::~WatchdogFeeder() = default;  // jthread: request_stop, then join

void NotifyReady() { NotifyFromEnvironment("READY=1"); }
void NotifyStopping() { NotifyFromEnvironment("STOPPING=1"); }
void NotifyWatchdog() { NotifyFromEnvironment("WATCHDOG=1"); }

std::optional<std::chrono::microseconds> WatchdogInterval() {
  std::optional<std::chrono::microseconds> full =
      ParseWatchdogUsec(std::getenv("WATCHDOG_USEC"), std::getenv("WATCHDOG_PID"), static_cast<long>(::getpid()));
  if (!full) return std::nullopt;
  return *full / 2;
}

}  // namespace gpuctl::sys
