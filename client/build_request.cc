#include "client/build_request.h"

#include <ctime>

#include "agents/sys/text_fields.h"
#include "common/units.h"

namespace gpuctl::client {

std::string DefaultBuildName(int64_t unix_ms) {
  std::time_t seconds = static_cast<std::time_t>(unix_ms / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char name[32];
  std::strftime(name, sizeof(name), "build-%Y%m%d-%H%M%S", &utc);
  return name;
}

Result<v1::StartJobRequest> BuildBuildJobRequest(const BuildFlags& flags, const std::string& client_cwd) {
  if (!flags.job.script.empty() || flags.job.command.empty()) {
    return InvalidArgument("nothing to build: give the build command after '--', e.g. "
                           "gpuctl build -- pip install flash-attn --no-build-isolation");
  }
  Result<v1::StartJobRequest> request = BuildStartJobRequest(flags.job, client_cwd);
  if (!request.ok()) return request;
  v1::JobSpec& spec = *request->mutable_spec();
  spec.set_kind("build");
  v1::BuildOptions& build = *spec.mutable_build();
  if (!flags.mem_budget.empty()) {
    Result<uint64_t> budget = ParseByteSize(flags.mem_budget);
    if (!budget.ok()) return budget.status().Wrap("--mem-budget");
    build.set_mem_budget_bytes(*budget);
  }
  if (!flags.cpus.empty()) {
    std::optional<uint32_t> cpus = sys::ToNumber<uint32_t>(flags.cpus);
    if (!cpus || *cpus == 0 || *cpus > 65536) {
      return InvalidArgument("--cpus must be a whole number from 1 to 65536, got '" + flags.cpus + "'");
    }
    build.set_cpus(*cpus);
  }
  if (!flags.archs.empty()) {
    std::string_view rest = flags.archs;
    for (;;) {
      size_t comma = rest.find(',');
      std::string trimmed(sys::Trim(rest.substr(0, comma)));
      if (trimmed.empty()) {
        return InvalidArgument("--archs is a comma-separated list of compute capabilities, e.g. 8.0,9.0; got '" +
                               flags.archs + "'");
      }
      build.add_archs(trimmed);
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  return request;
}

}  // namespace gpuctl::client
