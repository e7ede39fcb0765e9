// Provisioning end to end: the real gpuctld (its facts probed under a fixture
// root) and the real gpuctl, with the stand-ins for apt-get, dpkg-query, uv...
// first on the agent's PATH. Checks the commands run and their order, a rerun
// that changes nothing, a failure's exit code and message and its resume, a
// dry run, and the exit codes of refusals.
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/integration/agent_fixture.h"

namespace gpuctl::testing {
namespace {

using nlohmann::json;

class ProvisionIntegration : public AgentFixture {
 protected:
  void SetUp() override {
    dir_.WriteFile("root/etc/os-release", "PRETTY_NAME=\"Ubuntu 24.04.1 LTS\"\nID=ubuntu\nVERSION_ID=\"24.04\"\n");
    // A fresh host: GPUs, no NVIDIA kernel module loaded yet; curl is there.
    dir_.WriteFile("root/usr/bin/curl", "");
    dir_.WriteFile("root/etc/ssl/certs/ca-certificates.crt", "");
    dir_.MakeDir("standin");
    std::string path = std::string(GPUCTL_SOURCE_DIR) + "/tests/fakes/bin:" + std::getenv("PATH");
    StartAgent({"--provision-root", dir_.path() + "/root"},
               {{"PATH", path},
                {"GPUCTL_STANDIN_STATE", dir_.path() + "/standin"},
                {"GPUCTL_STANDIN_LOG", dir_.path() + "/standin.log"}});
  }

  std::string Venv() const { return dir_.path() + "/venv"; }

  // The stand-in invocations that change something, then forgets all.
  std::vector<std::string> TakeChanges() {
    std::ifstream in(dir_.path() + "/standin.log");
    std::vector<std::string> changes;
    for (std::string line; std::getline(in, line);) {
      bool read_only = line.rfind("dpkg-query ", 0) == 0 || line == "apt-mark showhold" ||
                       line.rfind("python ", 0) == 0 || line.rfind("py-spy ", 0) == 0 ||
                       line.rfind("nvcc ", 0) == 0 ||
                       line == "uv --version";
      if (!read_only) changes.push_back(line);
    }
    in.close();
    std::remove((dir_.path() + "/standin.log").c_str());
    return changes;
  }

  static json LastJsonLine(const std::string& out) {
    std::istringstream lines(out);
    std::string line, last;
    while (std::getline(lines, line)) {
      if (!line.empty()) last = line;
    }
    return json::parse(last);
  }
};

TEST_F(ProvisionIntegration, ProvisionsThenReprovisionsWithoutChangingAnything) {
  RunResult r = Gpuctl({"provision", "node", "--venv", Venv(), "--cuda", "13.1", "--torch", "2.10.0"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err << AgentLog();
  EXPECT_NE(r.out.find("driver      done    nvidia-open 580.105.08 installed, pinned to the 580 branch"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("STEP    RESULT"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("provisioned in"), std::string::npos) << r.out;
  std::vector<std::string> changes = TakeChanges();
  ASSERT_EQ(changes.size(), 10u) << r.out;
  EXPECT_EQ(changes[3], "apt-get install -y nvidia-driver-pinning-580");
  EXPECT_EQ(changes[4], "apt-get install -y nvidia-open");
  EXPECT_EQ(changes[6], "apt-get install -y cuda-toolkit-13-1");
  // The venv is made on this host's own python3 when PyTorch supports it
  // (no download), else on a Python uv downloads.
  RunResult python = RunProgram({"python3", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"});
  std::string system = python.exit_code == 0 ? python.out.substr(0, python.out.find('\n')) : "";
  bool usable = system == "3.10" || system == "3.11" || system == "3.12" || system == "3.13";
  EXPECT_EQ(changes[7], "uv venv " + Venv() + " --python " +
                            (usable ? system + " --python-preference only-system" : "3.12 --python-preference managed"));
  // py-spy for hang dumps, from the index uv is configured for (no flag).
  EXPECT_EQ(changes[8], "uv pip install --python " + Venv() + "/bin/python py-spy");
  EXPECT_EQ(changes[9], "uv pip install --python " + Venv() +
                            "/bin/python torch==2.10.0 --index-url https://download.pytorch.org/whl/cu130");
  std::ifstream profile(dir_.path() + "/root/etc/profile.d/gpuctl-cuda.sh");
  EXPECT_TRUE(profile.good());

  r = Gpuctl({"-o", "json", "provision", "node", "--venv", Venv()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(TakeChanges(), std::vector<std::string>{});
  json summary = LastJsonLine(r.out)["summary"];
  EXPECT_EQ(summary["ok"], true);
  ASSERT_EQ(summary["steps"].size(), 4u);
  for (const json& step : summary["steps"]) EXPECT_EQ(step["phase"], "skipped") << step;
}

TEST_F(ProvisionIntegration, AFailedStepExitsOneWithItsCommandAndTheRerunResumes) {
  dir_.WriteFile("standin/fail", "cuda-toolkit");
  RunResult r = Gpuctl({"provision", "node", "--venv", Venv()});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("cuda        failed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("command: DEBIAN_FRONTEND=noninteractive apt-get install -y cuda-toolkit-13-1"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("exit status: 100"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| E: Unable to fetch some archives"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("stopped at cuda (failed)"), std::string::npos) << r.out;
  TakeChanges();

  std::remove((dir_.path() + "/standin/fail").c_str());
  r = Gpuctl({"provision", "node", "--venv", Venv()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("driver      skipped"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("note: resuming here: the last run stopped at this step"), std::string::npos) << r.out;
  std::vector<std::string> changes = TakeChanges();
  EXPECT_EQ(changes.front(), "apt-get update");
  EXPECT_EQ(changes[1], "apt-get install -y cuda-toolkit-13-1");
}

TEST_F(ProvisionIntegration, DryRunPrintsThePlanAndChangesNothing) {
  RunResult r = Gpuctl({"provision", "node", "--dry-run", "--venv", Venv(), "--steps", "cuda,torch", "--cuda", "12.8"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("$ DEBIAN_FRONTEND=noninteractive apt-get install -y cuda-toolkit-12-8"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("torch==2.10.0 --index-url https://download.pytorch.org/whl/cu128"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("dry run: nothing was changed"), std::string::npos) << r.out;
  EXPECT_EQ(TakeChanges(), std::vector<std::string>{});
}

TEST_F(ProvisionIntegration, BadInputAndRefusalsExitTwo) {
  RunResult r = Gpuctl({"provision", "node", "--cuda", "13"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("give MAJOR.MINOR"), std::string::npos) << r.err;
  r = Gpuctl({"provision", "node", "--steps", "driver,kernel"});
  EXPECT_EQ(r.exit_code, 2) << r.err;

  // A container whose config lacks the passthrough lines: refused, the lines printed.
  dir_.WriteFile("root/etc/pve/lxc/200.conf", "arch: amd64\nlxc.cgroup2.devices.allow: c 195:* rwm\n");
  dir_.WriteFile("root/proc/devices", "Character devices:\n195 nvidia\n511 nvidia-uvm\n");
  dir_.WriteFile("root/dev/nvidia0", "");
  dir_.WriteFile("root/dev/nvidia-uvm", "");
  r = Gpuctl({"provision", "node", "--container", "200", "--steps", "driver"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.out.find("passthrough refused"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  lxc.cgroup2.devices.allow: c 511:* rwm\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  lxc.mount.entry: /dev/nvidia0 dev/nvidia0 none bind,optional,create=file\n"),
            std::string::npos) << r.out;
  EXPECT_EQ(TakeChanges(), std::vector<std::string>{});
}

}  // namespace
}  // namespace gpuctl::testing
