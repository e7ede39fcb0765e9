// sd_notify for Type=notify units: READY=1 once serving, WATCHDOG=1 from the
// guard loop, so systemd restarts an agent whose guard has hung. Without
// systemd ($NOTIFY_SOCKET unset) these do nothing.
//
// The protocol is one datagram to the AF_UNIX socket named by $NOTIFY_SOCKET
// (a path, or '@' for the abstract namespace), so it is spoken here directly
// instead of linking libsystemd: the portable agent carries no shared library
// a minimal host lacks.
#pragma once

#include <chrono>
#include <optional>
#include <string_view>
#include <thread>

#include "common/status.h"

namespace gpuctl::sys {

void NotifyReady();
void NotifyStopping();
void NotifyWatchdog();
// Half the unit's WatchdogSec (when set): how often NotifyWatchdog must come.
std::optional<std::chrono::microseconds> WatchdogInterval();

// Sends WATCHDOG=1 every `interval` from a thread of its own until
// destroyed. For an agent whose guard is off: with the guard on, the
// guard's loop feeds the watchdog, so a hung guard gets the agent restarted.
class WatchdogFeeder {
 public:
  explicit WatchdogFeeder(std::chrono::microseconds interval);
  ~WatchdogFeeder();
  WatchdogFeeder(const WatchdogFeeder&) = delete;
  WatchdogFeeder& operator=(const WatchdogFeeder&) = delete;

 private:
  std::jthread thread_;
};

// The parts above, with the environment passed in (for tests).
// Sends `state` to `notify_socket`; an empty socket name is a no-op.
Status SendNotify(std::string_view notify_socket, std::string_view state);
// $WATCHDOG_USEC and $WATCHDOG_PID as sd_watchdog_enabled reads them: the
// full WatchdogSec in microseconds, or nullopt when the watchdog is off, the
// value is not a positive number, or it is meant for another pid.
std::optional<std::chrono::microseconds> ParseWatchdogUsec(const char* usec, const char* pid, long self_pid);

}  // namespace gpuctl::sys
