// The pure parts of provisioning: wheel index mapping, CUDA repository
// names, option normalisation (plan order), dpkg output, facts parsers.
#include <gtest/gtest.h>

#include "agents/provision/apt_packages.h"
#include "agents/provision/cuda_releases.h"
#include "agents/provision/cuda_repo.h"
#include "agents/provision/plan_facts.h"
#include "agents/provision/provision_options.h"
#include "agents/provision/step_target.h"
#include "agents/provision/torch_index.h"
#include "agents/provision/venv_choice.h"
#include "agents/provision/venv_python.h"
#include "tests/fakes/temp_dir.h"

namespace gpuctl::provision {
namespace {

std::string Tag(const char* torch, const char* cuda, bool pre_turing = false) {
  return TorchIndexTagFor(torch, *ParseCudaVersion(cuda), pre_turing).value_or("none");
}

TEST(TorchIndex, FollowsEachReleasesOwnIndexes) {
  // 2.10: cu126, cu128, cu130. No torch of 2.9 or later has cu121, cu124 or cu129.
  EXPECT_EQ(Tag("2.10.0", "13.1"), "cu130");
  EXPECT_EQ(Tag("2.10.0", "13.0"), "cu130");
  EXPECT_EQ(Tag("2.10.0", "12.8"), "cu128");
  EXPECT_EQ(Tag("2.10.0", "12.9"), "cu128");
  EXPECT_EQ(Tag("2.10.0", "12.7"), "cu126");
  EXPECT_EQ(Tag("2.10.0", "12.0"), "cu126");  // no older 12.x index: the oldest of the major
  EXPECT_EQ(Tag("2.10.0", "11.8"), "none");
  EXPECT_EQ(Tag("2.10.0", "14.0"), "none");
  // 2.12 and later: cu126, cu130, cu132; cu128 is gone.
  EXPECT_EQ(Tag("2.12.0", "12.8"), "cu126");
  EXPECT_EQ(Tag("2.12.0", "13.2"), "cu132");
  EXPECT_EQ(Tag("3.0.0", "13.1"), "cu130");
  // Older releases keep theirs.
  EXPECT_EQ(Tag("2.8.0", "12.9"), "cu129");
  EXPECT_EQ(Tag("2.5.1", "12.4"), "cu124");
  EXPECT_EQ(Tag("2.6.0", "11.8"), "cu118");
  EXPECT_EQ(Tag("2.4.0", "12.4"), "none");
  EXPECT_EQ(Tag("not-a-version", "12.4"), "none");
  EXPECT_EQ(TorchIndexUrl("cu130"), "https://download.pytorch.org/whl/cu130");
  EXPECT_EQ(CudaVersionOfIndexTag("cu128"), (CudaVersion{12, 8}));
  EXPECT_EQ(CudaVersionOfIndexTag("cpu"), std::nullopt);
}

TEST(TorchIndex, GpusOlderThanTuringGetACuda12Index) {
  EXPECT_TRUE(AnyBeforeTuring({"9.0", "7.0"}));  // a V100 among H100s
  EXPECT_TRUE(AnyBeforeTuring({"6.1"}));
  EXPECT_FALSE(AnyBeforeTuring({"7.5", "8.0", "9.0", "12.0"}));
  EXPECT_FALSE(AnyBeforeTuring({}));
  EXPECT_EQ(Tag("2.10.0", "12.8", true), "cu126");  // cu128 dropped Maxwell and Pascal, and Volta from 2.11
  EXPECT_EQ(Tag("2.11.0", "12.9", true), "cu126");
  EXPECT_EQ(Tag("2.11.0", "12.9", false), "cu128");
  EXPECT_EQ(Tag("2.10.0", "13.0", true), "none");  // cu130 needs Turing
  EXPECT_EQ(TorchIndexChoices("2.10.0"), "torch 2.10.0 is published for cu126, cu128, cu130");
  EXPECT_EQ(TorchIndexChoices("1.13.1"), "gpuctl knows the CUDA indexes of torch 2.5 and later only");
}

TEST(CudaReleases, OnlyToolkitsThatExistInTheRepository) {
  auto ok = [](const char* repo, const char* cuda) { return CheckCudaToolkitExists(repo, *ParseCudaVersion(cuda)).ok(); };
  EXPECT_TRUE(ok("ubuntu2404", "13.1"));
  EXPECT_TRUE(ok("debian12", "12.8"));
  Status never = CheckCudaToolkitExists("ubuntu2404", {12, 7});
  ASSERT_FALSE(never.ok());
  EXPECT_EQ(never.code(), ErrorCode::kFailedPrecondition);  // a refusal: exit 2
  EXPECT_NE(never.message().find("never released"), std::string::npos) << never.message();
  Status debian13 = CheckCudaToolkitExists("debian13", {12, 9});
  ASSERT_FALSE(debian13.ok());
  EXPECT_NE(debian13.message().find("debian13 repository serves CUDA 13.0"), std::string::npos) << debian13.message();
  EXPECT_TRUE(ok("debian13", "13.0"));
  // CUDA 13 dropped Ubuntu 20.04 and Debian 11; their 12.x stays.
  EXPECT_FALSE(ok("ubuntu2004", "13.0"));
  EXPECT_FALSE(ok("debian11", "13.1"));
  EXPECT_TRUE(ok("debian11", "12.9"));
  Status old = CheckCudaToolkitExists("ubuntu2404", {12, 4});
  ASSERT_FALSE(old.ok());
  EXPECT_NE(old.message().find("newest of each major there: 12.9, 13.2"), std::string::npos) << old.message();
  EXPECT_TRUE(ok("ubuntu2404", "13.9"));  // newer than the table: the repository decides
}

TEST(CudaReleases, Cuda13NeedsThe580DriverBranch) {
  EXPECT_TRUE(CheckCudaAgainstDriver({13, 0}, std::string("580.95.05")).ok());
  EXPECT_TRUE(CheckCudaAgainstDriver({13, 1}, std::string("595.45.04")).ok());
  EXPECT_TRUE(CheckCudaAgainstDriver({12, 8}, std::string("550.127.05")).ok());
  EXPECT_TRUE(CheckCudaAgainstDriver({13, 0}, std::nullopt).ok());  // no driver yet: the driver step comes first
  Status old = CheckCudaAgainstDriver({13, 0}, std::string("550.127.05"));
  ASSERT_FALSE(old.ok());
  EXPECT_NE(old.message().find("needs the 580 driver branch or later, and the loaded driver is 550.127.05"),
            std::string::npos)
      << old.message();
}

TEST(CudaReleases, Cuda13DroppedGpusBeforeTuring) {
  auto pascal = CheckCudaAgainstGpus({13, 1}, {"6.0"});
  ASSERT_FALSE(pascal.ok());
  EXPECT_EQ(pascal.code(), ErrorCode::kFailedPrecondition);
  EXPECT_NE(pascal.message().find("use --cuda 12.9"), std::string::npos) << pascal.message();
  EXPECT_TRUE(CheckCudaAgainstGpus({12, 9}, {"6.0"}).ok());
  EXPECT_TRUE(CheckCudaAgainstGpus({13, 1}, {"7.5", "9.0"}).ok());
  EXPECT_TRUE(CheckCudaAgainstGpus({13, 1}, {}).ok());  // GPUs unknown: the repository decides
}

TEST(VenvChoice, TheSystemPythonWhenPyTorchSupportsIt) {
  EXPECT_EQ(UsableSystemPython("3.10.12"), "3.10");  // Ubuntu 22.04
  EXPECT_EQ(UsableSystemPython("3.11.2"), "3.11");   // Debian 12
  EXPECT_EQ(UsableSystemPython("3.12.3"), "3.12");   // Ubuntu 24.04
  EXPECT_EQ(UsableSystemPython("3.13.5"), "3.13");   // Debian 13
  EXPECT_EQ(UsableSystemPython("3.13"), "3.13");
  EXPECT_EQ(UsableSystemPython("3.9.2"), std::nullopt);  // Debian 11
  EXPECT_EQ(UsableSystemPython("3.14.0"), std::nullopt);
  EXPECT_EQ(UsableSystemPython("2.7.18"), std::nullopt);
  EXPECT_EQ(UsableSystemPython(""), std::nullopt);
  EXPECT_EQ(UsableSystemPython("3.x"), std::nullopt);
  EXPECT_EQ(ManagedPythonDir("/opt/gpuctl/venv"), "/opt/gpuctl/python");
  EXPECT_EQ(ManagedPythonDir("/opt/gpuctl/venv/"), "/opt/gpuctl/python");
  EXPECT_EQ(ManagedPythonDir("/venv"), "/python");
}

TEST(TorchIndex, ParsesCudaVersions) {
  EXPECT_EQ(ParseCudaVersion("13.1"), (CudaVersion{13, 1}));
  EXPECT_EQ(ParseCudaVersion("13.1.80"), (CudaVersion{13, 1}));
  EXPECT_EQ(ParseCudaVersion("13"), std::nullopt);
  EXPECT_EQ(ParseCudaVersion("None"), std::nullopt);
  EXPECT_EQ(ParseCudaVersion("13.x"), std::nullopt);
}

TEST(TorchImport, ParsesVersionAndCuda) {
  auto torch = ParseTorchImport("2.10.0+cu128 12.8\n");
  ASSERT_TRUE(torch);
  EXPECT_EQ(torch->base_version, "2.10.0");
  EXPECT_EQ(torch->cuda, (CudaVersion{12, 8}));
  auto cpu = ParseTorchImport("2.10.0+cpu None");
  ASSERT_TRUE(cpu);
  EXPECT_EQ(cpu->cuda, std::nullopt);
  EXPECT_EQ(ParseTorchImport("Traceback"), std::nullopt);
}

TEST(CudaRepo, NamesTheRepositoryForTheOs) {
  EXPECT_EQ(CudaRepoPath("ubuntu", "24.04", "x86_64"), "ubuntu2404/x86_64");
  EXPECT_EQ(CudaRepoPath("debian", "12", "x86_64"), "debian12/x86_64");
  EXPECT_EQ(CudaRepoPath("ubuntu", "22.04", "aarch64"), "ubuntu2204/sbsa");
  EXPECT_EQ(CudaRepoPath("fedora", "40", "x86_64"), std::nullopt);
  EXPECT_EQ(CudaRepoPath("ubuntu", "18.04", "x86_64"), std::nullopt);
  EXPECT_EQ(CudaKeyringUrl("debian12/x86_64"),
            "https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/cuda-keyring_1.1-1_all.deb");
}

TEST(ProvisionOptions, PutsStepsInPlanOrderAndFillsDefaults) {
  ProvisionConfig config;
  ProvisionOptions options;
  options.steps = {"torch", "driver", "venv"};
  auto normalized = NormalizeOptions(options, config);
  ASSERT_TRUE(normalized.ok());
  EXPECT_EQ(normalized->steps, (std::vector<std::string>{"driver", "venv", "torch"}));
  EXPECT_EQ(normalized->cuda_version, "13.1");
  EXPECT_EQ(normalized->torch_version, "2.10.0");
  EXPECT_EQ(normalized->venv_path, "/opt/gpuctl/venv");

  ProvisionOptions with_ext;
  with_ext.ext = "flash-attn";
  auto all = NormalizeOptions(with_ext, config);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->steps, (std::vector<std::string>{"driver", "cuda", "venv", "torch", "ext"}));
}

TEST(ProvisionOptions, RefusesBadInputSayingWhatIsAccepted) {
  ProvisionConfig config;
  auto expect_refused = [&](void (*set)(ProvisionOptions&), const std::string& words) {
    ProvisionOptions options;
    set(options);
    auto r = NormalizeOptions(options, config);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(words), std::string::npos) << r.status().message();
  };
  expect_refused([](ProvisionOptions& o) { o.steps = {"drivers"}; }, "the steps are driver, cuda, venv, torch, ext");
  expect_refused([](ProvisionOptions& o) { o.cuda_version = "13"; }, "give MAJOR.MINOR");
  expect_refused([](ProvisionOptions& o) { o.torch_version = "2.10 --index-url=x"; }, "not a PyTorch version");
  expect_refused([](ProvisionOptions& o) { o.venv_path = "venv"; }, "must be an absolute path");
  expect_refused([](ProvisionOptions& o) { o.venv_path = "/opt/../etc"; }, "no ..");
  expect_refused([](ProvisionOptions& o) { o.ext = "--pre"; }, "not a package name");
  expect_refused([](ProvisionOptions& o) { o.container = "ct200"; }, "not a Proxmox VMID");
  expect_refused([](ProvisionOptions& o) { o.steps = {"ext"}; }, "needs --ext NAME");
  expect_refused([](ProvisionOptions& o) { o.driver_branch = "latest"; }, "not a driver branch");
  expect_refused([](ProvisionOptions& o) { o.driver_branch = "580.95.05"; }, "give its number, e.g. 580");
  expect_refused([](ProvisionOptions& o) { o.torch_index = "ftp://mirror/whl"; }, "not a wheel index URL");
  expect_refused([](ProvisionOptions& o) { o.torch_index = "https://m/whl cu130"; }, "not a wheel index URL");
  expect_refused([](ProvisionOptions& o) { o.torch_index = "https://m/whl';rm"; }, "not a wheel index URL");
  // A CUDA past the known releases is refused before any step (the driver
  // would be installed first), unless --cuda-unlisted.
  expect_refused([](ProvisionOptions& o) { o.cuda_version = "14.0"; }, "newer than the CUDA releases gpuctl knows");
  expect_refused([](ProvisionOptions& o) { o.cuda_version = "99.9"; }, "add --cuda-unlisted");
  expect_refused([](ProvisionOptions& o) { o.cuda_version = "13.9"; }, "(up to 13.2)");
  for (const char* listed : {"13.2", "12.9", "11.8"}) {
    ProvisionOptions o;
    o.cuda_version = listed;
    EXPECT_TRUE(NormalizeOptions(o, config).ok()) << listed;
  }
  ProvisionOptions unlisted;
  unlisted.cuda_version = "14.0";
  unlisted.cuda_unlisted = true;
  EXPECT_TRUE(NormalizeOptions(unlisted, config).ok());
  // The venv is made as root: never in or over a system directory.
  for (const char* system : {"/etc", "/proc/self", "/usr", "/usr/lib/python3", "/var/log/x", "/root", "/opt",
                             "/dev/shm/v", "/sys/fs", "/boot/v", "/usr/local"}) {
    ProvisionOptions o;
    o.venv_path = system;
    auto r = NormalizeOptions(o, config);
    ASSERT_FALSE(r.ok()) << system;
    EXPECT_NE(r.status().message().find("a system directory"), std::string::npos) << r.status().message();
  }
  expect_refused([](ProvisionOptions& o) { o.venv_path = "/proc/self"; }, "--venv /proc/self is beneath /proc,");
  expect_refused([](ProvisionOptions& o) { o.venv_path = "/etc/"; }, "--venv /etc is a system directory");
  for (const char* fine : {"/opt/gpuctl/venv", "/usr/local/venv", "/var/lib/gpuctl/venv", "/srv/train/venv",
                           "/root/venv", "/home/me/venv", "/etcetera/venv"}) {
    ProvisionOptions o;
    o.venv_path = fine;
    EXPECT_TRUE(NormalizeOptions(o, config).ok()) << fine;
  }
  // torch is installed as root: a plain-HTTP index only when the user says so.
  expect_refused([](ProvisionOptions& o) { o.torch_index = "http://mirror.invalid/whl/cu130"; },
                 "is plain HTTP, and torch is installed from it as root");
  expect_refused([](ProvisionOptions& o) { o.torch_index = "http://mirror.invalid/whl/cu130"; },
                 "add --allow-insecure-index");
  ProvisionOptions good;
  good.driver_branch = "595";
  good.torch_index = "https://mirror.invalid/pytorch/whl/cu130";
  EXPECT_TRUE(NormalizeOptions(good, config).ok());
  ProvisionOptions insecure;
  insecure.torch_index = "http://127.0.0.1:8080/simple";
  insecure.allow_insecure_index = true;
  EXPECT_TRUE(NormalizeOptions(insecure, config).ok());
}

TEST(AptPackages, ParsesDpkgQueryAndHolds) {
  auto packages = ParseDpkgQuery(
      "nvidia-open install ok installed 590.44.01-1\ncuda-keyring unknown ok not-installed \n"
      "cuda-toolkit-13-1 install ok installed 13.1.0-1\n");
  EXPECT_TRUE(packages["nvidia-open"].installed);
  EXPECT_EQ(packages["nvidia-open"].version, "590.44.01-1");
  EXPECT_FALSE(packages["cuda-keyring"].installed);
  EXPECT_EQ(ParseShowHold("nvidia-open\nlibcuda1\n"), (std::set<std::string>{"libcuda1", "nvidia-open"}));
  EXPECT_EQ(UpstreamVersion("590.44.01-0ubuntu1"), "590.44.01");
  EXPECT_EQ(UpstreamVersion("1:2.3-4"), "2.3");
}

TEST(PlanFacts, AContainerKeepsTheHostsModuleButHasItsOwnOs) {
  testing::TempDir rootfs;
  rootfs.WriteFile("etc/os-release", "PRETTY_NAME=\"Ubuntu 24.04.1 LTS\"\nID=ubuntu\nVERSION_ID=\"24.04\"\n");
  PlanFacts host;
  host.os_id = "debian";
  host.os_version_id = "12";
  host.proxmox_host = true;
  host.kernel_module_version = "590.44.01";
  PlanFacts guest = ContainerFacts(host, sys::HostFs(rootfs.path()));
  EXPECT_EQ(guest.os_id, "ubuntu");
  EXPECT_EQ(guest.os_version_id, "24.04");
  EXPECT_TRUE(guest.container_guest);
  EXPECT_FALSE(guest.proxmox_host);
  EXPECT_EQ(guest.kernel_module_version, "590.44.01");
}

TEST(PlanFacts, ComeFromTheHostProbe) {
  HostProbe probe;
  probe.os_id = "ubuntu";
  probe.os_version_id = "24.04";
  probe.where.kind = sys::WhereKind::kLxc;
  probe.driver_module = NvidiaKernelModule{"590.44.01", true};
  probe.gpus = {ProbedGpu{"0000:17:00.0", "0302", "10de", "2335", "H200", "9.0"},
                ProbedGpu{"0000:18:00.0", "0302", "10de", "2b85", "B200", ""}};
  probe.mem_available_bytes = 123;
  probe.cpus = 16;
  PlanFacts facts = FactsFromProbe(probe);
  EXPECT_EQ(facts.os_id, "ubuntu");
  EXPECT_EQ(facts.os_version_id, "24.04");
  EXPECT_TRUE(facts.container_guest);
  EXPECT_EQ(facts.kernel_module_version, "590.44.01");
  EXPECT_TRUE(facts.kernel_module_open);
  EXPECT_EQ(facts.compute_capabilities, std::vector<std::string>{"9.0"});
  // The GPU whose compute capability is unknown is kept by name: the driver plan refuses it.
  EXPECT_EQ(facts.unidentified_gpus, std::vector<std::string>{"0000:18:00.0 [10de:2b85] B200"});
  EXPECT_EQ(facts.mem_available_bytes, 123u);
  EXPECT_EQ(facts.cpus, 16u);
  EXPECT_FALSE(FactsFromProbe(HostProbe{}).kernel_module_version.has_value());
}

TEST(StepTarget, FormatsCommandsForPastingAndKeepsTheOutputTail) {
  CommandLine line{{"python", "-c", "import torch; print(1)"}, {{"MAX_JOBS", "4"}}};
  EXPECT_EQ(FormatCommandLine(line), "MAX_JOBS=4 python -c 'import torch; print(1)'");
  sys::CommandOutput out;
  out.stdout_text = "a\nb\nc\n";
  out.stderr_text = "E: d\n";
  EXPECT_EQ(OutputTail(out, 2), "c\nE: d");
  EXPECT_EQ(OutputTail(out, 10), "a\nb\nc\nE: d");
}

}  // namespace
}  // namespace gpuctl::provision
