// `gpuctl -o json probe` against a real gpuctld: the fields this machine has
// (checked against /proc/meminfo, nproc, uname -r and os-release read here),
// and the GPU/CUDA/venv paths through stand-ins on PATH (tests/fakes/bin:
// lspci listing an H200, nvcc, nvidia-smi) and a stand-in venv python.
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/integration/agent_fixture.h"
#include "tests/fakes/temp_dir.h"

namespace gpuctl::testing {
namespace {

using nlohmann::json;

std::string StandInBin() { return std::string(GPUCTL_SOURCE_DIR) + "/tests/fakes/bin"; }

using gpuctl::testing::ReadText;

std::string Trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

uint64_t MemTotalBytesReadHere() {
  std::istringstream meminfo(ReadText("/proc/meminfo"));
  std::string key;
  uint64_t kb = 0;
  while (meminfo >> key >> kb) {
    if (key == "MemTotal:") return kb * 1024;
    meminfo.ignore(1 << 10, '\n');
  }
  return 0;
}

std::string OsReleaseId() {
  std::istringstream text(ReadText("/etc/os-release"));
  for (std::string line; std::getline(text, line);) {
    if (line.rfind("ID=", 0) != 0) continue;
    std::string id = line.substr(3);
    if (!id.empty() && id.front() == '"') id = id.substr(1, id.size() - 2);
    return id;
  }
  return "";
}

bool HasNoteContaining(const json& doc, const std::string& text) {
  for (const json& note : doc["notes"]) {
    if (note.get<std::string>().find(text) != std::string::npos) return true;
  }
  return false;
}

class ProbeIntegration : public AgentFixture {
 protected:
  // A venv whose python answers the probe's torch report like a cu130 build
  // and logs its arguments.
  std::string MakeStandInVenv() {
    std::string venv = dir_.path() + "/venv";
    dir_.WriteFile("venv/bin/python",
                   "#!/bin/sh\n"
                   "printf '%s\\n' \"$1\" >>\"" + dir_.path() + "/venv-python.log\"\n"
                   "echo '{\"python\": \"3.12.3\", \"torch\": \"2.11.0+cu130\", \"cuda\": \"13.0\"}'\n");
    chmod((venv + "/bin/python").c_str(), 0755);
    return venv;
  }
};

TEST_F(ProbeIntegration, ThisMachineAsItIs) {
  StartAgent();
  RunResult r = Gpuctl({"-o", "json", "probe"});
  ASSERT_EQ(r.exit_code, 0) << r.err << AgentLog();
  json doc = json::parse(r.out);
  EXPECT_EQ(doc["mem_total_bytes"], MemTotalBytesReadHere());
  EXPECT_GT(doc["mem_available_bytes"].get<uint64_t>(), 0u);
  EXPECT_EQ(doc["cpus"], std::stoul(RunProgram({"nproc"}).out));
  EXPECT_EQ(doc["kernel_release"], Trimmed(RunProgram({"uname", "-r"}).out));
  EXPECT_EQ(doc["os_id"], OsReleaseId());
  EXPECT_TRUE(doc["gpus"].is_array());
  // Each /usr/local/cuda-*/bin/nvcc this machine has is listed under its path.
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/usr/local", ec)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("cuda-", 0) != 0 || !std::filesystem::exists(entry.path() / "bin/nvcc")) continue;
    bool listed = false;
    for (const json& toolkit : doc["cuda_toolkits"]) listed = listed || toolkit["path"] == entry.path().string();
    EXPECT_TRUE(listed) << entry.path() << " not in " << doc["cuda_toolkits"].dump();
  }
  EXPECT_EQ(doc["driver_module"].is_null(), !std::filesystem::exists("/proc/driver/nvidia/version"));
  EXPECT_FALSE(doc["driver_version_mismatch"].get<bool>());
  EXPECT_TRUE(doc["notes"].is_array());
  if (doc["driver_module"].is_null()) {
    EXPECT_TRUE(HasNoteContaining(doc, "no NVIDIA kernel module loaded"));
  }
  for (const char* key : {"os_version_id", "kernel_headers_installed", "gpu_archs", "driver_library_version",
                          "cuda_toolkits", "uv_version", "python_version", "venvs", "lxc_guest", "proxmox_host",
                          "proxmox_version"}) {
    EXPECT_TRUE(doc.contains(key)) << key;
  }

  RunResult text = Gpuctl({"probe"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("kernel    " + Trimmed(RunProgram({"uname", "-r"}).out)), std::string::npos) << text.out;
}

TEST_F(ProbeIntegration, GpuCudaAndVenvThroughStandIns) {
  std::string lspci_log = dir_.path() + "/lspci.log";
  std::string standin_log = dir_.path() + "/standin.log";
  // The provisioning stand-ins' state: CUDA 12.8.93 installed, so their nvcc
  // answers (a version unlike a real /usr/local/cuda-* this machine may have).
  dir_.WriteFile("standin-state/pkg/cuda-toolkit-12-8", "12.8.93-1\n");
  std::string path = StandInBin() + ":" + std::getenv("PATH");
  StartAgent({}, {{"PATH", path}, {"FAKE_LSPCI_LOG", lspci_log}, {"GPUCTL_STANDIN_LOG", standin_log},
                  {"GPUCTL_STANDIN_STATE", dir_.path() + "/standin-state"}});
  std::string venv = MakeStandInVenv();
  RunResult r = Gpuctl({"-o", "json", "probe", "--venv", venv});
  ASSERT_EQ(r.exit_code, 0) << r.err << AgentLog();
  json doc = json::parse(r.out);

  ASSERT_EQ(doc["gpus"].size(), 1u) << doc.dump(2);
  const json& gpu = doc["gpus"][0];
  EXPECT_EQ(gpu["pci_address"], "0000:17:00.0");
  EXPECT_EQ(gpu["pci_class"], "0302");
  EXPECT_EQ(gpu["vendor_id"], "10de");
  EXPECT_EQ(gpu["device_id"], "2335");
  EXPECT_EQ(gpu["name"], "NVIDIA Corporation GH100 [H200 SXM 141GB]");
  EXPECT_EQ(gpu["compute_capability"], "9.0");
  EXPECT_EQ(doc["gpu_archs"], json::array({"90"}));
  EXPECT_EQ(ReadText(lspci_log), "-nn -D\n");

  // The stand-in nvidia-smi prints the H200 capture's driver.
  EXPECT_EQ(doc["driver_library_version"], "580.159.04");
  if (doc["driver_module"].is_null()) {
    EXPECT_FALSE(doc["driver_version_mismatch"].get<bool>());
  }

  json on_path = nullptr;
  for (const json& toolkit : doc["cuda_toolkits"]) {
    if (toolkit["version"] == "12.8") on_path = toolkit;
  }
  ASSERT_FALSE(on_path.is_null()) << doc.dump(2);
  EXPECT_EQ(on_path["build"], "V12.8.93");
  EXPECT_EQ(on_path["path"], std::string(GPUCTL_SOURCE_DIR) + "/tests/fakes");
  EXPECT_NE(ReadText(standin_log).find("nvcc --version"), std::string::npos) << ReadText(standin_log);

  ASSERT_GE(doc["venvs"].size(), 1u);
  const json& v = doc["venvs"][0];
  EXPECT_EQ(v["path"], venv);
  EXPECT_EQ(v["python_version"], "3.12.3");
  EXPECT_EQ(v["torch_version"], "2.11.0+cu130");
  EXPECT_EQ(v["torch_cuda"], "13.0");
  EXPECT_EQ(ReadText(dir_.path() + "/venv-python.log"), "-c\n");

  RunResult text = Gpuctl({"probe", "--venv", venv});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("0000:17:00.0 NVIDIA Corporation GH100 [H200 SXM 141GB] [10de:2335], compute capability 9.0"),
            std::string::npos) << text.out;
  EXPECT_NE(text.out.find("torch 2.11.0+cu130 (CUDA 13.0)"), std::string::npos) << text.out;
}

TEST_F(ProbeIntegration, AMissingRequestedVenvIsANoteAndABadPathIsRefused) {
  StartAgent();
  RunResult r = Gpuctl({"-o", "json", "probe", "--venv", dir_.path() + "/no-such-venv"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(HasNoteContaining(json::parse(r.out), "no-such-venv: no executable bin/python")) << r.out;

  RunResult relative = Gpuctl({"probe", "--venv", "venv"});
  EXPECT_EQ(relative.exit_code, 2) << relative.err;
  EXPECT_NE(relative.err.find("absolute path"), std::string::npos) << relative.err;
  RunResult dotdot = Gpuctl({"probe", "--venv", "/opt/../etc"});
  EXPECT_EQ(dotdot.exit_code, 2) << dotdot.err;
  EXPECT_NE(dotdot.err.find("without '..'"), std::string::npos) << dotdot.err;
}

}  // namespace
}  // namespace gpuctl::testing
