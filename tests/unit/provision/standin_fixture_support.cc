#include "tests/unit/provision/standin_fixture.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "agents/sys/files.h"

namespace gpuctl::provision {

Result<sys::CommandOutput> RecordingBuildRunner::Run(const GuardedBuild& build) {
  builds.push_back(build);
  sys::RunOptions options;
  options.env = build.env;
  return runner_.Run(build.argv, options);
}

StandinTest::StandinTest()
    : path_("PATH", std::string(GPUCTL_SOURCE_DIR) + "/tests/fakes/bin:" + std::getenv("PATH")),
      state_("GPUCTL_STANDIN_STATE", dir_.path() + "/standin"),
      log_("GPUCTL_STANDIN_LOG", dir_.path() + "/standin.log") {
  dir_.MakeDir("standin");
  dir_.MakeDir("root/etc");
  // curl and its CA bundle are there, as on most hosts (a test removes them).
  dir_.WriteFile("root/usr/bin/curl", "");
  dir_.WriteFile("root/etc/ssl/certs/ca-certificates.crt", "");
  facts.os_id = "ubuntu";
  facts.os_version_id = "24.04";
  facts.kernel_module_open = true;
  facts.compute_capabilities = {"9.0"};
  facts.mem_available_bytes = uint64_t{100} << 30;
  facts.cpus = 16;
  config.state_dir = dir_.path() + "/state";
  config.system_root = dir_.path() + "/root";
  config.lxc_rootfs_template = dir_.path() + "/lxc/{vmid}/rootfs";
  config.default_venv = venv();
  config.guard_reserve_bytes = uint64_t{4} << 30;
  runner = sys::MakeSubprocessRunner();
  builds = std::make_unique<RecordingBuildRunner>(*runner);
}

Result<ProvisionResult> StandinTest::Provision(ProvisionOptions options) {
  reports.clear();
  Provisioner provisioner(config, *runner, clock_, builds.get(), [this] { return facts; });
  return provisioner.Run(options, [this](const StepReport& r) { reports.push_back(r); });
}

std::vector<std::string> StandinTest::TakeInvocations() {
  std::string path = dir_.path() + "/standin.log";
  std::vector<std::string> lines;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  in.close();
  (void)sys::RemoveFile(path);
  return lines;
}

std::vector<std::string> StandinTest::Changing(const std::vector<std::string>& invocations) {
  std::vector<std::string> changing;
  for (const std::string& line : invocations) {
    if (line.rfind("dpkg-query ", 0) == 0 || line == "apt-mark showhold" || line.rfind("python ", 0) == 0 ||
        line.rfind("py-spy ", 0) == 0 || line.rfind("nvcc ", 0) == 0 || line.rfind("uv env ", 0) == 0 || line == "uv --version") {
      continue;
    }
    changing.push_back(line);
  }
  return changing;
}

void StandinTest::Installed(const std::string& package, const std::string& version) const {
  dir_.WriteFile("standin/pkg/" + package, version + "\n");
}

void StandinTest::Held(const std::string& package) const { dir_.WriteFile("standin/hold/" + package, ""); }

bool Contains(const std::vector<std::string>& lines, const std::string& line) {
  for (const auto& l : lines) {
    if (l == line) return true;
  }
  return false;
}

int IndexOf(const std::vector<std::string>& lines, const std::string& prefix) {
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind(prefix, 0) == 0) return static_cast<int>(i);
  }
  return -1;
}

const StepReport* LastReport(const ProvisionResult& result, const std::string& step) {
  for (const auto& r : result.steps) {
    if (r.step == step) return &r;
  }
  return nullptr;
}

}  // namespace gpuctl::provision
