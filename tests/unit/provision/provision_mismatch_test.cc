// The incident's cases against the stand-ins: torch built for CUDA 12.8 with
// toolkit 13.1 (resolved by the torch step, refused by ext alone with the two
// ways out), the extension build's governed environment, and an LXC guest
// whose user space must match the host's kernel module.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "agents/build/build_spec.h"
#include "agents/provision/driver_plan.h"
#include "agents/sys/files.h"
#include "tests/fakes/scoped_env.h"
#include "tests/unit/provision/standin_fixture.h"

namespace gpuctl::provision {
namespace {

// The ext step alone, for flash-attn.
ProvisionOptions FlashAttnExt() {
  ProvisionOptions options;
  options.steps = {"ext"};
  options.ext = "flash-attn";
  return options;
}


using ::testing::HasSubstr;

class ProvisionMismatchTest : public StandinTest {
 protected:
  // Toolkit 13.1 installed, and a venv with torch from the index given.
  void VenvWithTorch(const std::string& index_tag) {
    Installed("cuda-keyring", "1.1-1");
    Installed("cuda-toolkit-13-1", "13.1.0-1");
    ASSERT_EQ(runner->Run({"uv", "venv", venv(), "--python", "3.12"})->exit_code, 0);
    ASSERT_EQ(runner->Run({"uv", "pip", "install", "--python", venv() + "/bin/python", "torch==2.10.0",
                           "--index-url", "https://download.pytorch.org/whl/" + index_tag})
                  ->exit_code,
              0);
    TakeInvocations();
  }
};

// A torch for cu128 with toolkit 13.1 is reinstalled from cu130: PyTorch's
// own index, or a mirror given with --torch-index (used as given; the CUDA
// major is still checked by importing what it served).
TEST_F(ProvisionMismatchTest, TorchForCu128WithToolkit131IsReinstalledFromCu130) {
  for (std::string mirror : {"", "https://mirror.invalid/pytorch/whl/cu130"}) {
    SCOPED_TRACE(mirror);
    VenvWithTorch("cu128");
    ProvisionOptions options;
    options.steps = {"torch"};
    options.torch_index = mirror;
    auto result = Provision(options);
    ASSERT_TRUE(result.ok());
    EXPECT_TRUE(result->ok) << result->failed_step;
    const StepReport& planned = reports.front();
    EXPECT_EQ(planned.phase, StepPhase::kPlanned);
    EXPECT_THAT(planned.detail, HasSubstr("The detected CUDA version (13.1) mismatches the version that was used to "
                                          "compile PyTorch (12.8)"));
    std::string index = mirror.empty() ? "https://download.pytorch.org/whl/cu130" : mirror;
    EXPECT_EQ(Changing(TakeInvocations()),
              (std::vector<std::string>{"uv pip install --python " + venv() +
                                        "/bin/python --reinstall torch==2.10.0 --index-url " + index}));
    EXPECT_THAT(LastReport(*result, "torch")->detail, HasSubstr("2.10.0+cu130 imports, built for CUDA 13.0"));
  }
}

// A release with no index for the toolkit's major: the refusal suggests a
// toolkit that release has an index for (2.8: cu126-cu129 only), not 13.0.
TEST_F(ProvisionMismatchTest, TheTorchRefusalSuggestsAToolkitThatReleaseHasAnIndexFor) {
  for (auto [torch, suggested] : {std::pair{"2.8.0", "--cuda 12.9"}, std::pair{"2.5.1", "--cuda 12.4"}}) {
    SCOPED_TRACE(torch);
    VenvWithTorch("cu128");  // and toolkit 13.1, as above
    ProvisionOptions options;
    options.steps = {"torch"};
    options.torch_version = torch;
    auto result = Provision(options);
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    EXPECT_TRUE(result->refused);
    const std::string message = LastReport(*result, "torch")->failure->message;
    EXPECT_THAT(message, HasSubstr(suggested));
    EXPECT_THAT(message, ::testing::Not(HasSubstr("--cuda 13.0")));
    EXPECT_EQ(Changing(TakeInvocations()), std::vector<std::string>{});
  }
}

// A plain-HTTP mirror, accepted only with --allow-insecure-index: the plan says so.
TEST_F(ProvisionMismatchTest, AnInsecureIndexIsSaidInThePlan) {
  VenvWithTorch("cu128");
  ProvisionOptions options;
  options.steps = {"torch"};
  options.torch_index = "http://127.0.0.1:3141/whl/cu130";
  options.allow_insecure_index = true;
  auto result = Provision(options);
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(result->ok) << result->failed_step;
  const StepReport& planned = reports.front();
  EXPECT_THAT(planned.notes, ::testing::Contains(HasSubstr("INSECURE: the index is plain HTTP (--allow-insecure-index)")));
  options.allow_insecure_index = false;
  EXPECT_EQ(Provision(options).status().code(), ErrorCode::kInvalidArgument);
}

// CUDA 13 cannot build for a V100: refused before anything is installed.
TEST_F(ProvisionMismatchTest, Cuda13OnAVoltaHostIsRefusedNamingCuda129) {
  facts.compute_capabilities = {"7.0"};
  Installed("cuda-keyring", "1.1-1");
  ProvisionOptions options;
  options.steps = {"cuda"};
  auto result = Provision(options);
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(result->refused);
  EXPECT_THAT(LastReport(*result, "cuda")->failure->message, HasSubstr("use --cuda 12.9"));
  EXPECT_EQ(Changing(TakeInvocations()), std::vector<std::string>{});
  options.cuda_version = "12.9";
  auto older = Provision(options);
  ASSERT_TRUE(older.ok());
  EXPECT_TRUE(older->ok) << LastReport(*older, "cuda")->detail;
}

TEST_F(ProvisionMismatchTest, ExtAloneRefusesTheMismatchWithTheTwoWaysOut) {
  VenvWithTorch("cu128");
  ProvisionOptions options = FlashAttnExt();
  auto result = Provision(options);
  ASSERT_TRUE(result.ok());
  EXPECT_FALSE(result->ok);
  EXPECT_TRUE(result->refused);
  const StepReport* ext = LastReport(*result, "ext");
  ASSERT_TRUE(ext->failure);
  EXPECT_TRUE(ext->failure->refused);
  EXPECT_THAT(ext->failure->message, HasSubstr("mismatches the version that was used to compile PyTorch (12.8)"));
  EXPECT_THAT(ext->failure->message, HasSubstr("--steps cuda --cuda 12.8"));
  EXPECT_THAT(ext->failure->message, HasSubstr("--steps torch, from the cu130 index"));
  EXPECT_EQ(Changing(TakeInvocations()), std::vector<std::string>{});
  EXPECT_TRUE(builds->builds.empty());
}

TEST_F(ProvisionMismatchTest, ExtBuildsAsAGuardedJobWithTheGovernorsNumbers) {
  VenvWithTorch("cu130");
  ProvisionOptions options = FlashAttnExt();
  auto result = Provision(options);
  ASSERT_TRUE(result.ok());
  ASSERT_TRUE(result->ok) << LastReport(*result, "ext")->detail;
  ASSERT_EQ(builds->builds.size(), 1u);
  const GuardedBuild& build = builds->builds[0];
  EXPECT_EQ(build.name, "provision-ext-flash-attn");
  EXPECT_EQ(build.env.at("FLASH_ATTN_CUDA_ARCHS"), "90");
  EXPECT_EQ(build.env.at("TORCH_CUDA_ARCH_LIST"), "9.0");
  EXPECT_EQ(build.env.at("NVCC_THREADS"), "1");  // one arch: more threads would idle
  EXPECT_EQ(build.env.at("CUDA_HOME"), "/usr/local/cuda-13.1");
  // The live governor keeps memory inside the 96 GiB budget, so MAX_JOBS is
  // set for the 16 CPUs (the static model alone would allow 14).
  EXPECT_EQ(build.env.at("MAX_JOBS"), "16");
  EXPECT_EQ(build.env.at("CMAKE_BUILD_PARALLEL_LEVEL"), "16");
  EXPECT_EQ(build.mem_limit_bytes, uint64_t{96} << 30);
  std::vector<std::string> invoked = TakeInvocations();
  EXPECT_TRUE(Contains(invoked, "uv env MAX_JOBS=16 NVCC_THREADS=1 FLASH_ATTN_CUDA_ARCHS=90 TORCH_CUDA_ARCH_LIST=9.0"));
  const StepReport* ext = LastReport(*result, "ext");
  EXPECT_EQ(ext->phase, StepPhase::kDone);
  EXPECT_THAT(ext->detail, HasSubstr("flash-attn 2.8.3 imports"));
  bool explained = false;
  for (const auto& note : ext->notes) {
    explained = explained || (note.find("governed live: budget 96.0 GiB, MAX_JOBS=16") != std::string::npos &&
                              note.find("MAX_JOBS=14") != std::string::npos);
  }
  EXPECT_TRUE(explained);
}

// NVIDIA's runfile installs /usr/local/cuda-X.Y and no package: the probe's
// toolkit is the one to build against (as on the H200 host in the fixtures).
TEST_F(ProvisionMismatchTest, ExtBuildsAgainstARunfileToolkitWithoutAPackage) {
  ASSERT_EQ(runner->Run({"uv", "venv", venv(), "--python", "3.12"})->exit_code, 0);
  ASSERT_EQ(runner->Run({"uv", "pip", "install", "--python", venv() + "/bin/python", "torch==2.10.0", "--index-url",
                         "https://download.pytorch.org/whl/cu130"})
                ->exit_code,
            0);
  TakeInvocations();
  ProvisionOptions options;
  options.steps = {"ext"};
  options.ext = "flash-attn";

  auto refused = Provision(options);  // no package, no directory: nothing to build with
  ASSERT_TRUE(refused.ok());
  EXPECT_TRUE(refused->refused);
  EXPECT_THAT(LastReport(*refused, "ext")->detail, HasSubstr("no CUDA toolkit is installed"));

  facts.cuda_toolkit_versions = {"13.0"};
  auto result = Provision(options);
  ASSERT_TRUE(result.ok());
  ASSERT_TRUE(result->ok) << LastReport(*result, "ext")->detail;
  ASSERT_EQ(builds->builds.size(), 1u);
  EXPECT_EQ(builds->builds[0].env.at("CUDA_HOME"), "/usr/local/cuda-13.0");
}

TEST(PlanFacts, ToolkitsAreThoseWhereCudaHomeWouldPoint) {
  HostProbe probe;
  probe.cuda_toolkits = {{"/usr/local/cuda-13.0", "13.0", "V13.0.88"},
                         {"/usr/bin", "12.0", "V12.0.140"}};  // Debian's nvidia-cuda-toolkit: no CUDA_HOME there
  EXPECT_EQ(FactsFromProbe(probe).cuda_toolkit_versions, std::vector<std::string>{"13.0"});
}

TEST_F(ProvisionMismatchTest, LxcGuestInstallsUserSpaceAtTheHostModulesVersion) {
  facts.container_guest = true;
  facts.kernel_module_version = "590.44.01";
  facts.os_id = "debian";
  facts.os_version_id = "12";
  Installed("cuda-keyring", "1.1-1");
  ProvisionOptions options;
  options.steps = {"driver"};
  auto result = Provision(options);
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(result->ok) << LastReport(*result, "driver")->detail;
  EXPECT_EQ(Changing(TakeInvocations()),
            (std::vector<std::string>{"apt-get update",
                                      "apt-get install -y --no-install-recommends nvidia-driver-pinning-590.44.01",
                                      "apt-get install -y --no-install-recommends nvidia-driver-cuda"}));
  EXPECT_THAT(LastReport(*result, "driver")->detail, HasSubstr("matching the host's kernel module"));
}

TEST_F(ProvisionMismatchTest, LxcGuestRefusesUserSpaceOfAnotherVersion) {
  facts.container_guest = true;
  facts.kernel_module_version = "590.44.01";
  facts.os_id = "debian";
  facts.os_version_id = "12";
  Installed("cuda-keyring", "1.1-1");
  Installed("nvidia-driver-cuda", "580.95.05-1");
  ProvisionOptions options;
  options.steps = {"driver"};
  auto result = Provision(options);
  ASSERT_TRUE(result.ok());
  EXPECT_FALSE(result->ok);
  EXPECT_TRUE(result->refused);
  const StepReport* driver = LastReport(*result, "driver");
  ASSERT_TRUE(driver->failure);
  EXPECT_THAT(driver->failure->message, HasSubstr("user space 580.95.05 (nvidia-driver-cuda)"));
  EXPECT_THAT(driver->failure->message, HasSubstr("host's kernel module is 590.44.01"));
  EXPECT_THAT(driver->failure->message, HasSubstr("Driver/library version mismatch"));
  EXPECT_EQ(Changing(TakeInvocations()), std::vector<std::string>{});
}

TEST_F(ProvisionMismatchTest, UbuntuLxcGuestWithAnotherBranchsLibraryIsRefused) {
  facts.container_guest = true;  // Ubuntu 24.04
  facts.kernel_module_version = "590.44.01";
  Installed("cuda-keyring", "1.1-1");
  Installed("libnvidia-compute-580", "580.95.05-0ubuntu1");
  ProvisionOptions options;
  options.steps = {"driver"};
  auto result = Provision(options);
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(result->refused);
  EXPECT_THAT(LastReport(*result, "driver")->failure->message,
              HasSubstr("user space 580.95.05 (libnvidia-compute-580) but the host's kernel module is 590.44.01"));
  EXPECT_EQ(Changing(TakeInvocations()), std::vector<std::string>{});
}

// From 590 NVIDIA's Ubuntu packages have no branch in their names: the
// pinning package for the module's version picks it, for them and their
// dependencies alike.
TEST_F(ProvisionMismatchTest, UbuntuLxcGuestInstallsUnversionedPackagesAfterThePinningPackage) {
  facts.container_guest = true;
  facts.kernel_module_version = "590.44.01";
  Installed("cuda-keyring", "1.1-1");
  ProvisionOptions options;
  options.steps = {"driver"};
  auto result = Provision(options);
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(result->ok) << LastReport(*result, "driver")->detail;
  EXPECT_EQ(Changing(TakeInvocations()),
            (std::vector<std::string>{
                "apt-get update", "apt-get install -y --no-install-recommends nvidia-driver-pinning-590.44.01",
                "apt-get install -y --no-install-recommends libnvidia-compute nvidia-headless-no-dkms-open"}));
  auto again = Provision(options);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(LastReport(*again, "driver")->phase, StepPhase::kSkipped) << LastReport(*again, "driver")->detail;
}

// Under a host driver before 580 there is no pinning package: gpuctl writes
// the apt preferences it would hold, so dependencies follow the version too.
TEST_F(ProvisionMismatchTest, LxcGuestUnderA550HostPinsWithAptPreferences) {
  facts.container_guest = true;
  facts.kernel_module_version = "550.127.05";
  Installed("cuda-keyring", "1.1-1");
  testing::ScopedEnv offered("GPUCTL_STANDIN_DRIVER_VERSION", "550.127.05");
  ProvisionOptions options;
  options.steps = {"driver"};
  auto result = Provision(options);
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(result->ok) << LastReport(*result, "driver")->detail;
  EXPECT_EQ(Changing(TakeInvocations()),
            (std::vector<std::string>{"apt-get update", "apt-get install -y --no-install-recommends "
                                                        "libnvidia-compute-550 nvidia-utils-550"}));
  auto prefs = sys::ReadWholeFile(config.system_root + std::string(kPinPreferencesPath));
  ASSERT_TRUE(prefs.ok());
  EXPECT_THAT(*prefs, HasSubstr("Pin: version 550.127.05-*"));
}

TEST_F(ProvisionMismatchTest, LxcGuestWithoutAHostModuleIsRefused) {
  facts.container_guest = true;
  facts.kernel_module_version.reset();
  ProvisionOptions options;
  options.steps = {"driver"};
  auto result = Provision(options);
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(result->refused);
  EXPECT_THAT(LastReport(*result, "driver")->failure->message, HasSubstr("install the driver on the Proxmox host first"));
}

// No GPU seen: flash-attn's five default archs on four threads need 26 GiB
// a compile, more than the 22 GiB here: fewer archs at once, not a refusal.
TEST_F(ProvisionMismatchTest, ExtLowersNvccThreadsUntilOneCompileFits) {
  VenvWithTorch("cu130");
  facts.compute_capabilities.clear();
  facts.mem_available_bytes = uint64_t{22} << 30;
  facts.cpus = 2;
  ProvisionOptions options = FlashAttnExt();
  auto result = Provision(options);
  ASSERT_TRUE(result.ok());
  ASSERT_TRUE(result->ok) << LastReport(*result, "ext")->detail;
  ASSERT_EQ(builds->builds.size(), 1u);
  // 22 GiB less the 4 GiB reserve holds two archs' 13 GiB, not three's 19.5.
  EXPECT_EQ(builds->builds[0].env.at("NVCC_THREADS"), "2");
  EXPECT_EQ(builds->builds[0].env.at("MAX_JOBS"), "1");
  EXPECT_EQ(builds->builds[0].env.at("FLASH_ATTN_CUDA_ARCHS"), "80;90;100;110;120");
  bool noted = false;
  for (const auto& note : LastReport(*result, "ext")->notes) noted = noted || note.find("NVCC_THREADS=2") == 0;
  EXPECT_TRUE(noted);
}

TEST_F(ProvisionMismatchTest, ExtIsRefusedWhenNotEvenOneArchOfOneCompileFits) {
  VenvWithTorch("cu130");
  facts.compute_capabilities.clear();
  facts.mem_available_bytes = uint64_t{6} << 30;  // 2 GiB above the reserve: under one arch's 6.5
  ProvisionOptions options = FlashAttnExt();
  auto refused = Provision(options);
  ASSERT_TRUE(refused.ok());
  EXPECT_TRUE(refused->refused);
  EXPECT_THAT(LastReport(*refused, "ext")->failure->message, HasSubstr("not even one compile job"));
  EXPECT_TRUE(builds->builds.empty());
}

TEST_F(ProvisionMismatchTest, ExtWithOneArchThatCannotFitIsRefusedNotAnError) {
  VenvWithTorch("cu130");
  facts.mem_available_bytes = uint64_t{6} << 30;  // one H200 (9.0); 2 GiB above the reserve
  auto refused = Provision(FlashAttnExt());
  ASSERT_TRUE(refused.ok());
  EXPECT_TRUE(refused->refused);
  EXPECT_THAT(LastReport(*refused, "ext")->failure->message, HasSubstr("not even one compile job"));
}

// One preparation for every build: the ext step's build gets the limit and
// the environment build::PrepareBuild gives a `gpuctl build` job on the same
// host (the probe's CPUs and memory, the guard's reserve, its GPUs' archs in
// order), plus only the toolkit to build with.
TEST_F(ProvisionMismatchTest, ExtBuildIsPreparedAsEveryBuildJobIs) {
  VenvWithTorch("cu130");
  facts.compute_capabilities = {"9.0", "8.0", "9.0"};
  auto result = Provision(FlashAttnExt());
  ASSERT_TRUE(result.ok());
  ASSERT_TRUE(result->ok) << LastReport(*result, "ext")->detail;
  ASSERT_EQ(builds->builds.size(), 1u);
  const GuardedBuild& build = builds->builds[0];
  auto prepared = build::PrepareBuild(std::nullopt, 0, {},
                                      {.cpus = 16,
                                       .available_bytes = facts.mem_available_bytes,
                                       .reserve_bytes = config.guard_reserve_bytes,
                                       .gpu_capabilities = {"8.0", "9.0"}});
  ASSERT_TRUE(prepared.ok()) << prepared.status().ToString();
  std::map<std::string, std::string> env = build.env;
  EXPECT_EQ(env.erase("CUDA_HOME"), 1u);
  EXPECT_EQ(env, prepared->env);
  EXPECT_EQ(env.at("FLASH_ATTN_CUDA_ARCHS"), "80;90");
  EXPECT_EQ(build.mem_limit_bytes, prepared->budget_bytes);
}

}  // namespace
}  // namespace gpuctl::provision
