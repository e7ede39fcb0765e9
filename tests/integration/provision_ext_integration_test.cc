// The ext step end to end: the extension build runs as a guarded training job
// (tmux, and as root a memory cgroup with the build's budget as its limit),
// with the build governor's MAX_JOBS/NVCC_THREADS/arch list in its
// environment, and the step waits for it and verifies by importing.
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <nlohmann/json.hpp>

#include "tests/integration/train_fixture.h"

namespace gpuctl::testing {
namespace {

class ProvisionExtIntegration : public TrainFixture {
 protected:
  void SetUp() override {
    TrainFixture::SetUp();
    dir_.WriteFile("root/etc/os-release", "ID=debian\nVERSION_ID=\"12\"\n");
    dir_.WriteFile("root/proc/meminfo", "MemTotal:       134217728 kB\nMemFree:        104857600 kB\n"
                                        "MemAvailable:   104857600 kB\n");
    dir_.WriteFile("root/proc/self/status", "Name:\tgpuctld\nCpus_allowed_list:\t0-15\n");
    dir_.MakeDir("standin");
    env_ = AgentEnv();
    env_["PATH"] = std::string(GPUCTL_SOURCE_DIR) + "/tests/fakes/bin:" + std::getenv("PATH");
    env_["GPUCTL_STANDIN_STATE"] = dir_.path() + "/standin";
    env_["GPUCTL_STANDIN_LOG"] = dir_.path() + "/standin.log";
    // Toolkit 13.1 and a venv with torch for cu130, as the earlier steps leave them.
    dir_.WriteFile("standin/pkg/cuda-toolkit-13-1", "13.1.0-1\n");
    ASSERT_EQ(RunProgram({"uv", "venv", Venv(), "--python", "3.12"}, env_).exit_code, 0);
    ASSERT_EQ(RunProgram({"uv", "pip", "install", "--python", Venv() + "/bin/python", "torch==2.10.0", "--index-url",
                          "https://download.pytorch.org/whl/cu130"},
                         env_)
                  .exit_code,
              0);
  }
  void Start(std::vector<std::string> extra_flags = {}, std::map<std::string, std::string> extra_env = {}) {
    std::vector<std::string> flags = AgentFlags();
    flags.insert(flags.end(), {"--provision-root", dir_.path() + "/root"});
    flags.insert(flags.end(), extra_flags.begin(), extra_flags.end());
    std::map<std::string, std::string> env = env_;
    env.insert(extra_env.begin(), extra_env.end());
    StartAgent(flags, env);
  }

  std::string Venv() const { return dir_.path() + "/venv"; }
  std::map<std::string, std::string> env_;
};

TEST_F(ProvisionExtIntegration, BuildsAsAGuardedJobWithTheGovernorsNumbers) {
  Start();
  RunResult r = Gpuctl({"provision", "node", "--steps", "ext", "--ext", "flash-attn", "--venv", Venv()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err << AgentLog();
  EXPECT_NE(r.out.find("note: governed live: budget "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ext         done    flash-attn 2.8.3 imports"), std::string::npos) << r.out;

  std::string log = ReadFile(dir_.path() + "/standin.log");
  EXPECT_NE(log.find("uv pip install --python " + Venv() + "/bin/python --no-build-isolation flash-attn"),
            std::string::npos) << log;
  // The probe sees the stand-in nvidia-smi's H200 (compute capability 9.0):
  // only its arch is built, not flash-attn's five defaults.
  EXPECT_NE(log.find("NVCC_THREADS=1 FLASH_ATTN_CUDA_ARCHS=90 TORCH_CUDA_ARCH_LIST=9.0"), std::string::npos) << log;

  nlohmann::json job = Status("provision-ext-flash-attn");
  EXPECT_EQ(job["state"], "succeeded") << job;
  // The record keeps what the job was given: the governor's env and the
  // build's memory budget as its cgroup limit.
  nlohmann::json record = nlohmann::json::parse(ReadFile(StateDir() + "/jobs/provision-ext-flash-attn/job.json"));
  EXPECT_EQ(record["spec"]["env"]["NVCC_THREADS"], "1") << record;
  EXPECT_EQ(record["spec"]["kind"], "build") << record;
  EXPECT_EQ(record["spec"]["env"]["CUDA_HOME"], "/usr/local/cuda-13.1") << record;
  EXPECT_GT(record["spec"]["mem_limit_bytes"].get<uint64_t>(), uint64_t{50} << 30) << record;

  // Built and importable: a second run skips it.
  r = Gpuctl({"provision", "node", "--steps", "ext", "--ext", "flash-attn", "--venv", Venv()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("ext         skipped flash-attn 2.8.3 imports"), std::string::npos) << r.out;
}

// Found on the H200 test host: with no names from lspci (not installed there),
// provisioning's facts had no compute capability although NVML knew it, and
// the ext step planned flash-attn's five default archs for one sm_90 GPU.
// The driver's answers reach provisioning as they reach `gpuctl probe`.
TEST_F(ProvisionExtIntegration, ArchsComeFromTheDriverWhenThePciListingHasNoNames) {
  Start({"--nvml-library", std::string(GPUCTL_BINARY_DIR) + "/tests/fake_nvml/libnvidia-ml.so.1"},
        {{"FAKE_NVML_SCENARIO", "two_gpus"}, {"FAKE_LSPCI_GPUS", "none"}});
  RunResult r = Gpuctl(
      {"-o", "json", "provision", "node", "--dry-run", "--steps", "ext", "--ext", "flash-attn", "--venv", Venv()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err << AgentLog();
  std::string archs;
  bool no_gpu_note = false;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    nlohmann::json doc = nlohmann::json::parse(line, nullptr, false);
    if (!doc.contains("step") || doc["step"]["step"] != "ext") continue;
    for (const auto& command : doc["step"]["commands"]) {
      if (command["env"].contains("FLASH_ATTN_CUDA_ARCHS")) archs = command["env"]["FLASH_ATTN_CUDA_ARCHS"];
    }
    for (const auto& note : doc["step"]["notes"]) no_gpu_note = no_gpu_note || note.get<std::string>().starts_with("no GPU seen");
  }
  // The fake's H200 (9.0) and RTX 4090 (8.9), from NVML alone.
  EXPECT_EQ(archs, "89;90") << r.out;
  EXPECT_FALSE(no_gpu_note) << r.out;
}

}  // namespace
}  // namespace gpuctl::testing
