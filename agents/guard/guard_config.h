// The memory guard's settings: one plain struct with every default here,
// validated once at start so that a bad setting is refused with a message
// instead of being discovered at kill time.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/units.h"

namespace gpuctl::guard {

// What the guard watches: the whole host (MemAvailable), or one cgroup
// (its limit against its usage; for LXC containers and for tests).
struct GuardDomain {
  enum class Kind { kHost, kCgroup };
  Kind kind = Kind::kHost;
  std::string cgroup;  // kCgroup: as /proc/PID/cgroup names it, "/lxc/c1"

  bool operator==(const GuardDomain&) const = default;
};

// "host" or "cgroup:/PATH". Errors: kInvalidArgument saying which forms are
// accepted. Whether the cgroup exists is checked at start, with the driver.
Result<GuardDomain> ParseGuardDomain(std::string_view text);
std::string FormatGuardDomain(const GuardDomain& domain);  // back to that text

struct GuardConfig {
  // Kill line: kill when the domain's available memory falls below this.
  // nullopt: DefaultReserveBytes(domain total).
  std::optional<uint64_t> reserve_bytes;
  // Warn line = reserve + margin. nullopt: the margin equals the reserve, so
  // warnings start at twice the reserve.
  std::optional<uint64_t> warn_margin_bytes;
  // Sustained PSI "full" (every task stalled: thrashing) of `psi_full_stall`
  // within `psi_full_window` warns, as a PSI trigger or, when polling, as
  // full avg10 >= stall/window. The 2 s window is the shortest the kernel
  // allows openers without CAP_SYS_RESOURCE (containers, this dev machine).
  std::chrono::microseconds psi_full_stall{200000};
  std::chrono::microseconds psi_full_window{2000000};
  // The backstop poll between kernel events.
  std::chrono::milliseconds poll_interval{100};
  // Whether processes gpuctl did not launch may be killed (--guard-unmanaged).
  bool guard_unmanaged = false;
  // Never killed, matched against /proc/PID/comm (15 characters at most, as
  // the kernel truncates). sshd-session is OpenSSH 9.8+'s per-login process.
  std::vector<std::string> protected_names = {"sshd", "sshd-session"};
  GuardDomain domain;
};

// max(1 GiB, 3% of total), but at most an eighth of the total so that a small
// domain (a 1 GiB container) still has room above its kill line.
uint64_t DefaultReserveBytes(uint64_t total_bytes);
// The configured reserve or the default for `total_bytes`.
uint64_t ReserveBytes(const GuardConfig& config, uint64_t total_bytes);
// Reserve plus the configured or default margin.
uint64_t WarnLineBytes(const GuardConfig& config, uint64_t total_bytes);
// stall/window in percent, the figure PSI's avg10 is compared with.
double PsiFullPercent(const GuardConfig& config);

// Refuses what cannot work, against the domain's total memory (host
// MemTotal, or the cgroup's limit): a zero reserve, a reserve or warn line
// not below the total, a PSI window outside 500 ms..10 s or a stall outside
// it, a poll interval outside 1..100 ms, an empty or over-long protected name,
// a cgroup domain without an absolute path. Errors: kInvalidArgument that
// names the setting and the fix.
Status Validate(const GuardConfig& config, uint64_t total_bytes);

}  // namespace gpuctl::guard
