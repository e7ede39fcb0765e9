#include "agents/sys/systemd_notify.h"

#include <systemd/sd-daemon.h>

namespace gpuctl::sys {

void NotifyReady() { sd_notify(0, "READY=1"); }
void NotifyStopping() { sd_notify(0, "STOPPING=1"); }
void NotifyWatchdog() { sd_notify(0, "WATCHDOG=1"); }

std::optional<std::chrono::microseconds> WatchdogInterval() {
  uint64_t usec = 0;
  if (sd_watchdog_enabled(0, &usec) <= 0 || usec == 0) return std::nullopt;
  return std::chrono::microseconds(usec / 2);
}

}  // namespace gpuctl::sys
