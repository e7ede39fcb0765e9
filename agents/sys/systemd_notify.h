// sd_notify for Type=notify units: READY=1 once serving, WATCHDOG=1 from the
// guard loop, so systemd restarts an agent whose guard has hung. Without
// systemd ($NOTIFY_SOCKET unset) these do nothing.
#pragma once

#include <chrono>
#include <optional>

namespace gpuctl::sys {

void NotifyReady();
void NotifyStopping();
void NotifyWatchdog();
// Half the unit's WatchdogSec (when set): how often NotifyWatchdog must come.
std::optional<std::chrono::microseconds> WatchdogInterval();

}  // namespace gpuctl::sys
