// Provisioning against the recorded stand-ins (tests/fakes/bin): the real
// subprocess runner runs apt-get, dpkg-query, uv... found on PATH, which log
// their argv and keep "installed" state in a temp dir. Facts are literals.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "agents/provision/provisioner.h"
#include "agents/sys/clock.h"
#include "tests/fakes/scoped_env.h"
#include "tests/fakes/temp_dir.h"

namespace gpuctl::provision {

// Runs guarded builds as plain commands and remembers them (the job
// machinery has its own tests; here the point is what the build is given).
class RecordingBuildRunner : public GuardedBuildRunner {
 public:
  explicit RecordingBuildRunner(sys::CommandRunner& runner) : runner_(runner) {}
  Result<sys::CommandOutput> Run(const GuardedBuild& build) override;
  std::vector<GuardedBuild> builds;

 private:
  sys::CommandRunner& runner_;
};

class StandinTest : public ::testing::Test {
 protected:
  StandinTest();

  // A fresh Ubuntu 24.04 host: one H200 (9.0), no driver, 100 GiB free, 16 CPUs.
  PlanFacts facts;
  ProvisionConfig config;

  Result<ProvisionResult> Provision(ProvisionOptions options);
  // Every stand-in invocation so far, "NAME ARGS...", then forgets them.
  std::vector<std::string> TakeInvocations();
  // Only those that change the system (not dpkg-query, showhold, python, py-spy, nvcc).
  static std::vector<std::string> Changing(const std::vector<std::string>& invocations);
  void Installed(const std::string& package, const std::string& version) const;
  void Held(const std::string& package) const;
  std::string venv() const { return dir_.path() + "/venv"; }
  const testing::TempDir& dir() const { return dir_; }

  std::vector<StepReport> reports;  // of the last Provision
  std::unique_ptr<sys::CommandRunner> runner;
  std::unique_ptr<RecordingBuildRunner> builds;

 private:
  testing::TempDir dir_;
  sys::RealClock clock_;
  testing::ScopedEnv path_;
  testing::ScopedEnv state_;
  testing::ScopedEnv log_;
};

// "apt-get install -y nvidia-open" is in `lines` (exactly).
bool Contains(const std::vector<std::string>& lines, const std::string& line);
// The index of the first line that starts with `prefix`, or -1.
int IndexOf(const std::vector<std::string>& lines, const std::string& prefix);
const StepReport* LastReport(const ProvisionResult& result, const std::string& step);

}  // namespace gpuctl::provision
