#include "agents/guard/guard_config.h"

#include <algorithm>

#include "agents/sys/psi_trigger.h"
#include "common/units.h"

namespace gpuctl::guard {
namespace {

constexpr std::string_view kCgroupPrefix = "cgroup:";
// The kernel keeps 15 characters of a command name (TASK_COMM_LEN 16); a
// longer protected name could never match and would protect nothing.
constexpr size_t kMaxCommLength = 15;

}  // namespace

Result<GuardDomain> ParseGuardDomain(std::string_view text) {
  if (text == "host") return GuardDomain{};
  if (text.starts_with(kCgroupPrefix)) {
    std::string_view path = text.substr(kCgroupPrefix.size());
    if (path.empty() || path.front() != '/') {
      return InvalidArgument("guard domain '" + std::string(text) +
                             "' needs an absolute cgroup path, as /proc/PID/cgroup shows it: cgroup:/lxc/c1");
    }
    return GuardDomain{GuardDomain::Kind::kCgroup, std::string(path)};
  }
  return InvalidArgument("unknown guard domain '" + std::string(text) + "'; use 'host' or 'cgroup:/PATH'");
}

std::string FormatGuardDomain(const GuardDomain& domain) {
  if (domain.kind == GuardDomain::Kind::kHost) return "host";
  return std::string(kCgroupPrefix) + domain.cgroup;
}

uint64_t DefaultReserveBytes(uint64_t total_bytes) {
  uint64_t three_percent = total_bytes / 100 * 3;
  return std::min(std::max(kGiB, three_percent), total_bytes / 8);
}

uint64_t ReserveBytes(const GuardConfig& config, uint64_t total_bytes) {
  return config.reserve_bytes.value_or(DefaultReserveBytes(total_bytes));
}

uint64_t WarnLineBytes(const GuardConfig& config, uint64_t total_bytes) {
  uint64_t reserve = ReserveBytes(config, total_bytes);
  uint64_t margin = config.warn_margin_bytes.value_or(reserve);
  // Saturate: a huge margin means "always warn", never a wrapped small line.
  return margin > UINT64_MAX - reserve ? UINT64_MAX : reserve + margin;
}

double PsiFullPercent(const GuardConfig& config) {
  return 100.0 * static_cast<double>(config.psi_full_stall.count()) /
         static_cast<double>(config.psi_full_window.count());
}

Status Validate(const GuardConfig& config, uint64_t total_bytes) {
  if (total_bytes == 0) return InvalidArgument("the guard's domain reports no memory at all; check the domain");
  const std::string total = FormatBytes(total_bytes);
  uint64_t reserve = ReserveBytes(config, total_bytes);
  if (reserve == 0) {
    return InvalidArgument("a guard reserve of 0 bytes would never kill; give a reserve above 0 (the default is "
                           "max(1 GiB, 3% of memory))");
  }
  if (reserve >= total_bytes) {
    return InvalidArgument("guard reserve " + FormatBytes(reserve) + " is not below the domain's " + total +
                           " of memory, so the guard would kill at once; give a smaller reserve");
  }
  uint64_t warn = WarnLineBytes(config, total_bytes);
  if (warn >= total_bytes) {
    return InvalidArgument("guard warn line " + FormatBytes(warn) + " (reserve " + FormatBytes(reserve) +
                           " plus margin) is not below the domain's " + total +
                           " of memory, so the guard would always warn; give a smaller warn margin");
  }
  sys::PsiTriggerSpec psi{.full = true, .stall = config.psi_full_stall, .window = config.psi_full_window};
  if (Status s = sys::ValidatePsiTriggerSpec(psi); !s.ok()) return s.Wrap("guard PSI full threshold");
  if (config.poll_interval < std::chrono::milliseconds(1) || config.poll_interval > std::chrono::milliseconds(100)) {
    return InvalidArgument("guard poll interval " + std::to_string(config.poll_interval.count()) +
                           " ms is outside 1..100 ms; a slower poll reacts too late to fast growth");
  }
  for (const std::string& name : config.protected_names) {
    if (name.empty() || name.size() > kMaxCommLength) {
      return InvalidArgument("protected process name '" + name +
                             "' must be 1 to 15 characters, as the kernel keeps in /proc/PID/comm");
    }
  }
  if (config.domain.kind == GuardDomain::Kind::kCgroup &&
      (config.domain.cgroup.empty() || config.domain.cgroup.front() != '/')) {
    return InvalidArgument("guard domain cgroup '" + config.domain.cgroup + "' must be an absolute cgroup path");
  }
  return Status::Ok();
}

}  // namespace gpuctl::guard
