// The collector against fixture trees in a temp dir and a scripted runner.
#include "agents/provision/host_probe.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "agents/provision/probe_versions.h"
#include "tests/fakes/fake_command_runner.h"
#include "tests/fakes/temp_dir.h"

namespace gpuctl::provision {
namespace {

using testing::FakeCommandRunner;

constexpr const char* kKernel = "6.8.0-60-generic";

bool HasNoteContaining(const HostProbe& probe, std::string_view text) {
  return std::any_of(probe.notes.begin(), probe.notes.end(),
                     [&](const std::string& note) { return note.find(text) != std::string::npos; });
}

std::string AllNotes(const HostProbe& probe) {
  std::string out;
  for (const std::string& note : probe.notes) out += "\n  " + note;
  return out;
}

class HostProbeTest : public ::testing::Test {
 protected:
  HostProbeTest() : fs_(dir_.path()) {
    dir_.WriteFile("etc/os-release", "PRETTY_NAME=\"Ubuntu 24.04.2 LTS\"\nNAME=\"Ubuntu\"\nVERSION_ID=\"24.04\"\nID=ubuntu\n");
    dir_.WriteFile("proc/sys/kernel/osrelease", std::string(kKernel) + "\n");
    dir_.WriteFile("proc/meminfo", "MemTotal:       131899444 kB\nMemFree:  1000 kB\nMemAvailable:   125000000 kB\n");
    dir_.WriteFile("proc/self/status", "Name:\tgpuctld\nCpus_allowed_list:\t0-15\n");
    dir_.WriteFile("proc/1/cgroup", "0::/init.scope\n");
  }

  void AddExecutable(const std::string& relative, std::string_view content = "#!/bin/sh\n") {
    dir_.WriteFile(relative, content);
    std::filesystem::permissions(dir_.path() + "/" + relative, std::filesystem::perms::owner_all);
  }
  // The H200 host of ../shared/fixtures/gpu-host: open module 580.159.04, CUDA 13.0, torch cu130.
  void ScriptH200Host() {
    dir_.MakeDir(std::string("lib/modules/") + kKernel + "/build");
    dir_.WriteFile("proc/driver/nvidia/version",
                   "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  "
                   "(dvs-builder@U22-I3-AF03-09-1)  Thu Nov 13 19:24:51 UTC 2025\nGCC version:  gcc version 12.3.0\n");
    dir_.WriteFile("usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1", "");
    dir_.WriteFile("usr/lib/x86_64-linux-gnu/libnvidia-ml.so.580.159.04", "");
    AddExecutable("usr/local/cuda-13.0/bin/nvcc");
    AddExecutable("opt/venv/bin/python");
    runner_.SetResult({"lspci", "-nn", "-D"},
                      FakeCommandRunner::Output(0,
                          "0000:00:00.0 Host bridge [0600]: Intel Corporation Device [8086:09a2] (rev 04)\n"
                          "0000:17:00.0 3D controller [0302]: NVIDIA Corporation GH100 [H200 SXM 141GB] [10de:2335] (rev a1)\n"));
    runner_.SetResult({Root("usr/local/cuda-13.0/bin/nvcc"), "--version"},
                      FakeCommandRunner::Output(0, "Cuda compilation tools, release 13.0, V13.0.88\n"));
    runner_.SetResult({"uv", "--version"}, FakeCommandRunner::Output(0, "uv 0.8.17 (10960bc13 2025-09-10)\n"));
    runner_.SetResult({"python3", "--version"}, FakeCommandRunner::Output(0, "Python 3.12.3\n"));
    runner_.SetResult({Root("opt/venv/bin/python"), "-c", kTorchReportScript},
                      FakeCommandRunner::Output(0, "{\"python\": \"3.12.3\", \"torch\": \"2.11.0+cu130\", \"cuda\": \"13.0\"}\n"));
  }
  std::string Root(const std::string& relative) const { return fs_.Path(relative); }
  HostProbe Probe() const { return HostProber(fs_, const_cast<FakeCommandRunner&>(runner_)).Probe(options_); }

  testing::TempDir dir_;
  sys::HostFs fs_;
  FakeCommandRunner runner_;
  ProbeOptions options_;
};

TEST_F(HostProbeTest, H200HostWithEverythingInstalled) {
  ScriptH200Host();
  HostProbe probe = Probe();
  EXPECT_EQ(probe.os_id, "ubuntu");
  EXPECT_EQ(probe.os_version_id, "24.04");
  EXPECT_EQ(probe.os_pretty_name, "Ubuntu 24.04.2 LTS");
  EXPECT_EQ(probe.kernel_release, kKernel);
  EXPECT_TRUE(probe.kernel_headers_installed);
  EXPECT_EQ(probe.cpus, 16u);
  EXPECT_EQ(probe.mem_total_bytes, 131899444ull * 1024);
  EXPECT_EQ(probe.mem_available_bytes, 125000000ull * 1024);
  ASSERT_EQ(probe.gpus.size(), 1u);
  EXPECT_EQ(probe.gpus[0].pci_address, "0000:17:00.0");
  EXPECT_EQ(probe.gpus[0].device_id, "2335");
  EXPECT_EQ(probe.gpus[0].compute_capability, "9.0");  // from the chip: no driver report given
  EXPECT_EQ(probe.gpu_archs, std::vector<std::string>{"90"});
  ASSERT_TRUE(probe.driver_module.has_value());
  EXPECT_EQ(probe.driver_module->version, "580.159.04");
  EXPECT_TRUE(probe.driver_module->open);
  EXPECT_EQ(probe.driver_library_version, "580.159.04");  // from the library's file name
  EXPECT_FALSE(probe.driver_version_mismatch);
  ASSERT_EQ(probe.cuda_toolkits.size(), 1u);
  EXPECT_EQ(probe.cuda_toolkits[0].path, "/usr/local/cuda-13.0");
  EXPECT_EQ(probe.cuda_toolkits[0].version, "13.0");
  EXPECT_EQ(probe.cuda_toolkits[0].build, "V13.0.88");
  EXPECT_EQ(probe.uv_version, "0.8.17");
  EXPECT_EQ(probe.python_version, "3.12.3");
  ASSERT_EQ(probe.venvs.size(), 1u);
  EXPECT_EQ(probe.venvs[0].path, "/opt/venv");
  EXPECT_EQ(probe.venvs[0].torch_version, "2.11.0+cu130");
  EXPECT_EQ(probe.venvs[0].torch_cuda, "13.0");
  EXPECT_FALSE(probe.lxc_guest);
  EXPECT_FALSE(probe.proxmox_host);
  EXPECT_TRUE(probe.notes.empty()) << AllNotes(probe);
}

TEST_F(HostProbeTest, EveryCommandHasATimeoutAndTorchGetsTheLongOne) {
  ScriptH200Host();
  options_.command_timeout = std::chrono::milliseconds(1234);
  options_.python_timeout = std::chrono::milliseconds(56789);
  (void)Probe();
  ASSERT_FALSE(runner_.calls().empty());
  for (const FakeCommandRunner::Call& call : runner_.calls()) {
    bool torch = call.argv.size() == 3 && call.argv[1] == "-c";
    EXPECT_EQ(call.options.timeout.count(), torch ? 56789 : 1234) << call.argv[0];
  }
}

TEST_F(HostProbeTest, DriverReportGivesCapabilitiesAndTheLibraryVersionWithoutAskingAgain) {
  ScriptH200Host();
  options_.driver.library_version = "580.159.04";
  options_.driver.compute_capability_by_pci = {{"0000:17:00.0", "9.0a"}};
  HostProbe probe = Probe();
  ASSERT_EQ(probe.gpus.size(), 1u);
  EXPECT_EQ(probe.gpus[0].compute_capability, "9.0a");
  EXPECT_EQ(probe.gpu_archs, std::vector<std::string>{"90a"});
  for (const auto& argv : runner_.argvs()) EXPECT_NE(argv[0], "nvidia-smi");
}

TEST_F(HostProbeTest, ModuleAndLibraryOfDifferentVersionsAreAMismatch) {
  ScriptH200Host();
  std::filesystem::remove(dir_.path() + "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.580.159.04");
  dir_.WriteFile("usr/lib/x86_64-linux-gnu/libnvidia-ml.so.590.44.01", "");
  runner_.SetResult({"nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"},
                    FakeCommandRunner::Output(18, "Failed to initialize NVML: Driver/library version mismatch\n"
                                                  "NVML library version: 590.44\n"));
  HostProbe probe = Probe();
  EXPECT_EQ(probe.driver_library_version, "590.44.01");
  EXPECT_TRUE(probe.driver_version_mismatch);
  EXPECT_TRUE(HasNoteContaining(probe, "kernel module 580.159.04, user-space library 590.44.01")) << AllNotes(probe);
  EXPECT_TRUE(HasNoteContaining(probe, "exited 18")) << AllNotes(probe);
}

TEST_F(HostProbeTest, NvidiaSmiGivesTheLibraryVersionWhenNoReportIsGiven) {
  ScriptH200Host();
  runner_.SetResult({"nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"},
                    FakeCommandRunner::Output(0, "575.57.08\n"));
  HostProbe probe = Probe();
  EXPECT_EQ(probe.driver_library_version, "575.57.08");
  EXPECT_TRUE(probe.driver_version_mismatch);
}

TEST_F(HostProbeTest, BareHostReportsWhatIsMissingInNotesNeverAnError) {
  dir_.WriteFile("etc/os-release", "ID=debian\nVERSION_ID=\"12\"\nNAME=\"Debian GNU/Linux\"\n");
  runner_.SetResult({"dpkg-query", "-W", "-f=${Status}", std::string("linux-headers-") + kKernel},
                    FakeCommandRunner::Output(1, "", "dpkg-query: no packages found matching linux-headers\n"));
  HostProbe probe = Probe();
  EXPECT_EQ(probe.os_id, "debian");
  EXPECT_EQ(probe.os_version_id, "12");
  EXPECT_EQ(probe.os_pretty_name, "Debian GNU/Linux");
  EXPECT_FALSE(probe.kernel_headers_installed);
  EXPECT_TRUE(probe.gpus.empty());
  EXPECT_FALSE(probe.driver_module.has_value());
  EXPECT_EQ(probe.driver_library_version, "");
  EXPECT_FALSE(probe.driver_version_mismatch);
  EXPECT_TRUE(probe.cuda_toolkits.empty());
  EXPECT_EQ(probe.uv_version, "");
  EXPECT_TRUE(probe.venvs.empty());
  for (const char* expected : {"no kernel headers", "lspci", "no NVIDIA kernel module", "libnvidia-ml",
                               "no CUDA toolkit", "uv not found", "python3 not found"}) {
    EXPECT_TRUE(HasNoteContaining(probe, expected)) << expected << " in" << AllNotes(probe);
  }
}

// A minimal Debian has no pciutils: the bus in sysfs still lists the GPU, and
// the driver (when loaded) gives its compute capability.
TEST_F(HostProbeTest, WithoutLspciGpusComeFromSysfs) {
  dir_.WriteFile("sys/bus/pci/devices/0000:17:00.0/vendor", "0x10de\n");
  dir_.WriteFile("sys/bus/pci/devices/0000:17:00.0/device", "0x2335\n");
  dir_.WriteFile("sys/bus/pci/devices/0000:17:00.0/class", "0x030200\n");
  options_.driver.compute_capability_by_pci = {{"0000:17:00.0", "9.0"}};
  HostProbe probe = Probe();  // no lspci result scripted: the runner says it is missing
  ASSERT_EQ(probe.gpus.size(), 1u) << AllNotes(probe);
  EXPECT_EQ(probe.gpus[0].pci_address, "0000:17:00.0");
  EXPECT_EQ(probe.gpus[0].device_id, "2335");
  EXPECT_EQ(probe.gpus[0].pci_class, "0302");
  EXPECT_EQ(probe.gpu_archs, std::vector<std::string>{"90"});
  EXPECT_TRUE(HasNoteContaining(probe, "GPUs read from /sys/bus/pci")) << AllNotes(probe);
}

TEST_F(HostProbeTest, SecureBootFromTheEfiVariable) {
  EXPECT_FALSE(Probe().secure_boot);  // no EFI: a BIOS boot
  const std::string var = "sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c";
  dir_.WriteFile(var, std::string("\x06\x00\x00\x00\x01", 5));
  EXPECT_TRUE(Probe().secure_boot);
  dir_.WriteFile(var, std::string("\x06\x00\x00\x00\x00", 5));
  EXPECT_FALSE(Probe().secure_boot);
  dir_.WriteFile(var, "garbage");
  HostProbe odd = Probe();
  EXPECT_FALSE(odd.secure_boot);
  EXPECT_TRUE(HasNoteContaining(odd, "Secure Boot state unknown")) << AllNotes(odd);
}

TEST_F(HostProbeTest, HeadersFromDpkgWhenTheBuildLinkIsAbsent) {
  runner_.SetResult({"dpkg-query", "-W", "-f=${Status}", std::string("linux-headers-") + kKernel},
                    FakeCommandRunner::Output(0, "install ok installed"));
  EXPECT_TRUE(Probe().kernel_headers_installed);
}

TEST_F(HostProbeTest, ToolkitsInUsrLocalAndOnPathEachOnce) {
  AddExecutable("usr/local/cuda-12.8/bin/nvcc");
  AddExecutable("usr/local/cuda-13.0/bin/nvcc");
  dir_.MakeDir("usr/local/cuda-11.8");  // no bin/nvcc
  dir_.MakeDir("usr/local/cudnn");
  runner_.SetResult({Root("usr/local/cuda-12.8/bin/nvcc"), "--version"},
                    FakeCommandRunner::Output(0, "Cuda compilation tools, release 12.8, V12.8.93\n"));
  runner_.SetResult({Root("usr/local/cuda-13.0/bin/nvcc"), "--version"},
                    FakeCommandRunner::Output(0, "Cuda compilation tools, release 13.0, V13.0.88\n"));
  // On PATH: the same 13.0 (a /usr/local/cuda link) and, in another dir, Debian's 12.2.
  AddExecutable("path-a/bin/nvcc");
  options_.path_env = Root("path-a/bin");
  runner_.SetResult({Root("path-a/bin/nvcc"), "--version"},
                    FakeCommandRunner::Output(0, "Cuda compilation tools, release 13.0, V13.0.88\n"));
  HostProbe probe = Probe();
  ASSERT_EQ(probe.cuda_toolkits.size(), 2u) << AllNotes(probe);
  EXPECT_EQ(probe.cuda_toolkits[0].version, "12.8");
  EXPECT_EQ(probe.cuda_toolkits[1].version, "13.0");
  EXPECT_TRUE(HasNoteContaining(probe, "/usr/local/cuda-11.8 has no bin/nvcc"));

  runner_.SetResult({Root("path-a/bin/nvcc"), "--version"},
                    FakeCommandRunner::Output(0, "Cuda compilation tools, release 12.2, V12.2.140\n"));
  probe = Probe();
  ASSERT_EQ(probe.cuda_toolkits.size(), 3u);
  EXPECT_EQ(probe.cuda_toolkits[2].path, Root("path-a"));
  EXPECT_EQ(probe.cuda_toolkits[2].version, "12.2");
}

TEST_F(HostProbeTest, VenvsFromTheRequestThenDefaultsWithTorchCudaAndErrors) {
  options_.home_dir = "/root";
  options_.venvs = {"/srv/train/.venv", "/srv/missing"};
  AddExecutable("srv/train/.venv/bin/python");
  AddExecutable("root/.venv/bin/python");
  AddExecutable("root/.local/bin/uv");
  runner_.SetResult({Root("srv/train/.venv/bin/python"), "-c", kTorchReportScript},
                    FakeCommandRunner::Output(0, "{\"python\": \"3.12.3\", \"torch\": \"2.10.0+cu128\", \"cuda\": \"12.8\"}"));
  runner_.SetResult({Root("root/.venv/bin/python"), "-c", kTorchReportScript},
                    FakeCommandRunner::Output(0, "{\"python\": \"3.11.2\", \"error\": \"ModuleNotFoundError: No module named 'torch'\"}"));
  runner_.SetResult({Root("root/.local/bin/uv"), "--version"}, FakeCommandRunner::Output(0, "uv 0.9.2\n"));
  HostProbe probe = Probe();
  ASSERT_EQ(probe.venvs.size(), 2u) << AllNotes(probe);
  EXPECT_EQ(probe.venvs[0].path, "/srv/train/.venv");
  EXPECT_EQ(probe.venvs[0].torch_version, "2.10.0+cu128");
  EXPECT_EQ(probe.venvs[0].torch_cuda, "12.8");
  EXPECT_EQ(probe.venvs[1].path, "/root/.venv");
  EXPECT_EQ(probe.venvs[1].python_version, "3.11.2");
  EXPECT_EQ(probe.venvs[1].torch_version, "");
  EXPECT_EQ(probe.uv_version, "0.9.2");  // found in ~/.local/bin, not on PATH
  EXPECT_TRUE(HasNoteContaining(probe, "venv /srv/missing: no executable bin/python")) << AllNotes(probe);
  EXPECT_TRUE(HasNoteContaining(probe, "No module named 'torch'")) << AllNotes(probe);
  EXPECT_FALSE(HasNoteContaining(probe, "/opt/venv")) << "a missing default venv is not news";
}

TEST_F(HostProbeTest, AHungCommandBecomesANote) {
  ScriptH200Host();
  runner_.SetResult({"lspci", "-nn", "-D"}, Unavailable("'lspci' timed out after 10000 ms and was killed"));
  HostProbe probe = Probe();
  EXPECT_TRUE(probe.gpus.empty());
  EXPECT_TRUE(HasNoteContaining(probe, "timed out")) << AllNotes(probe);
  EXPECT_EQ(probe.cuda_toolkits.size(), 1u) << "the rest of the probe still ran";
}

TEST_F(HostProbeTest, LxcGuestSeesTheHostsModuleAndTheDriversGpus) {
  ScriptH200Host();
  dir_.WriteFile("run/host/container-manager", "lxc\n");
  runner_.SetResult({"lspci", "-nn", "-D"}, FakeCommandRunner::Output(0, ""));  // no PCI bus inside
  options_.driver.compute_capability_by_pci = {{"0000:17:00.0", "9.0"}};
  HostProbe probe = Probe();
  EXPECT_TRUE(probe.lxc_guest);
  ASSERT_EQ(probe.gpus.size(), 1u);
  EXPECT_EQ(probe.gpus[0].pci_address, "0000:17:00.0");
  EXPECT_EQ(probe.gpu_archs, std::vector<std::string>{"90"});
}

TEST_F(HostProbeTest, ProxmoxHostByPctOrPveAndItsVersion) {
  AddExecutable("usr/sbin/pct");
  runner_.SetResult({"pveversion"}, FakeCommandRunner::Output(0, "pve-manager/8.2.4/faa83925c9641325 (running kernel: 6.8.8-2-pve)\n"));
  HostProbe probe = Probe();
  EXPECT_TRUE(probe.proxmox_host);
  EXPECT_EQ(probe.proxmox_version, "pve-manager/8.2.4/faa83925c9641325 (running kernel: 6.8.8-2-pve)");
  EXPECT_FALSE(probe.lxc_guest);
}

}  // namespace
}  // namespace gpuctl::provision
