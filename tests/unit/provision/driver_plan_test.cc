// The driver plan as a pure function over tables of hosts: distributions,
// GPU generations, what driver is there already, Secure Boot, Proxmox, and
// LXC guests under host drivers of three branch families.
#include "agents/provision/driver_plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "agents/provision/debian_sources.h"
#include "agents/provision/driver_branches.h"
#include "agents/provision/host_probe.h"

namespace gpuctl::provision {
namespace {

using ::testing::HasSubstr;

// "apt-get install -y nvidia-open", or "write /etc/..." for a file.
std::vector<std::string> Lines(const DriverPlan& plan) {
  std::vector<std::string> lines;
  for (const StepAction& action : plan.actions) {
    if (action.argv.empty()) {
      lines.push_back("write " + action.write_path);
      continue;
    }
    std::string line;
    for (const std::string& arg : action.argv) line += (line.empty() ? "" : " ") + arg;
    lines.push_back(line);
  }
  return lines;
}

int IndexOf(const std::vector<std::string>& lines, const std::string& line) {
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i] == line) return static_cast<int>(i);
  }
  return -1;
}

PlanFacts Host(std::string os_id, std::string version, std::vector<std::string> capabilities = {"8.0"}) {
  PlanFacts facts;
  facts.os_id = std::move(os_id);
  facts.os_version_id = std::move(version);
  facts.kernel_release = facts.os_id == "ubuntu" ? "6.8.0-45-generic" : "6.1.0-26-amd64";
  facts.compute_capabilities = std::move(capabilities);
  return facts;
}

DriverState FreshState(const PlanFacts& facts) {
  DriverState state;
  if (facts.os_id == "debian") {
    state.contrib_enabled = false;
    state.contrib_list = "deb http://archive.invalid/debian bookworm contrib\n";
  }
  return state;
}

DriverState State(DriverSource source, std::string version, std::vector<std::string> packages = {}) {
  DriverState state;
  state.source = source;
  state.installed_version = std::move(version);
  state.packages = std::move(packages);
  return state;
}

DriverState NvidiaRepo(std::string version, std::string pinned) {
  DriverState state = State(DriverSource::kNvidiaRepo, std::move(version));
  state.installed_package = "nvidia-open";
  state.pinned = std::move(pinned);
  return state;
}

DriverRequest Asking(int branch, bool replace = false) {
  DriverRequest request;
  request.branch = branch;
  request.branch_given = true;
  request.replace_driver = replace;
  return request;
}

// Every supported distribution, Turing or newer: pinning before the driver,
// headers before the driver, contrib (Debian) before apt-get update.
TEST(DriverPlan, AFreshHostPinsTheDefaultBranchBeforeInstallingTheOpenModules) {
  for (auto [os, version] : std::vector<std::pair<std::string, std::string>>{
           {"debian", "12"}, {"debian", "13"}, {"ubuntu", "22.04"}, {"ubuntu", "24.04"}}) {
    SCOPED_TRACE(os + " " + version);
    PlanFacts facts = Host(os, version);
    auto plan = PlanHostDriver(facts, FreshState(facts), {});
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    EXPECT_FALSE(plan->done);
    std::vector<std::string> lines = Lines(*plan);
    int update = IndexOf(lines, "apt-get update");
    int headers = IndexOf(lines, "apt-get install -y linux-headers-" + facts.kernel_release);
    int pin = IndexOf(lines, "apt-get install -y nvidia-driver-pinning-580");
    int driver = IndexOf(lines, "apt-get install -y nvidia-open");
    ASSERT_GE(update, 0) << ::testing::PrintToString(lines);
    EXPECT_LT(update, headers);
    EXPECT_LT(headers, pin);
    EXPECT_LT(pin, driver);
    EXPECT_EQ(driver, static_cast<int>(lines.size()) - 1);
    int contrib = IndexOf(lines, "write " + std::string(kContribListPath));
    if (os == "debian") {
      EXPECT_EQ(contrib, 0);
    } else {
      EXPECT_EQ(contrib, -1);
    }
    EXPECT_THAT(plan->notes.back(), HasSubstr("branch 580 (the default, NVIDIA's long-term support branch, chosen "));
    EXPECT_FALSE(plan->reboot_required);  // no module was loaded: nothing breaks
  }
}

TEST(DriverPlan, TheAskedBranchIsPinned) {
  PlanFacts facts = Host("ubuntu", "24.04", {"10.0"});
  auto plan = PlanHostDriver(facts, {}, Asking(595));
  ASSERT_TRUE(plan.ok());
  EXPECT_GE(IndexOf(Lines(*plan), "apt-get install -y nvidia-driver-pinning-595"), 0);
  EXPECT_THAT(plan->notes.back(), HasSubstr("branch 595 (--driver-branch), open modules"));
}

TEST(DriverPlan, GpusBeforeTuringGetTheProprietaryModulesOf580) {
  for (const char* cc : {"6.0", "7.0", "5.2"}) {  // Pascal P100, Volta V100, Maxwell
    PlanFacts facts = Host("ubuntu", "22.04", {cc});
    auto plan = PlanHostDriver(facts, {}, {});
    ASSERT_TRUE(plan.ok()) << cc;
    std::vector<std::string> lines = Lines(*plan);
    EXPECT_LT(IndexOf(lines, "apt-get install -y nvidia-driver-pinning-580"),
              IndexOf(lines, "apt-get install -y cuda-drivers"));
    EXPECT_EQ(IndexOf(lines, "apt-get install -y nvidia-open"), -1);
  }
  auto later = PlanHostDriver(Host("ubuntu", "22.04", {"7.0"}), {}, Asking(590));
  ASSERT_FALSE(later.ok());
  EXPECT_EQ(later.status().code(), ErrorCode::kFailedPrecondition);
  EXPECT_THAT(later.status().message(), HasSubstr("the 580 branch is the last for Maxwell, Pascal and Volta"));
  // Turing itself (7.5) takes the open modules.
  auto turing = PlanHostDriver(Host("ubuntu", "22.04", {"7.5"}), {}, {});
  ASSERT_TRUE(turing.ok());
  EXPECT_GE(IndexOf(Lines(*turing), "apt-get install -y nvidia-open"), 0);
}

// Kepler's last branch is 470: the default 580 does not drive it.
TEST(DriverPlan, KeplerIsRefusedByTheBranchesThatDropped) {
  auto refused = PlanHostDriver(Host("debian", "12", {"3.7"}), {}, {});  // Tesla K80
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(),
              HasSubstr("the 580 driver branch does not drive the Kepler GPUs here (compute capability 3.7): the 470 "
                        "branch is the last that does. Use --driver-branch 470"));
  auto kept = PlanHostDriver(Host("debian", "12", {"3.7"}), {}, Asking(470));
  ASSERT_TRUE(kept.ok()) << kept.status().ToString();
  EXPECT_GE(IndexOf(Lines(*kept), "apt-get install -y cuda-drivers"), 0);
}

// A branch older than the GPUs: refused, naming the oldest that drives them.
TEST(DriverPlan, ABranchOlderThanTheGpusIsRefusedNamingTheOldestThatDrivesThem) {
  auto h200 = PlanHostDriver(Host("debian", "12", {"9.0"}), {}, Asking(470));
  ASSERT_FALSE(h200.ok());
  EXPECT_EQ(h200.status().code(), ErrorCode::kFailedPrecondition);
  EXPECT_THAT(h200.status().message(), HasSubstr("--driver-branch 470 does not drive the Hopper GPUs here (compute "
                                                 "capability 9.0): the oldest branch that does is 550"));
  auto b200 = PlanHostDriver(Host("debian", "12", {"10.0"}), {}, Asking(550));
  ASSERT_FALSE(b200.ok());
  EXPECT_THAT(b200.status().message(), HasSubstr("the oldest branch that does is 570"));
  EXPECT_TRUE(PlanHostDriver(Host("debian", "12", {"9.0"}), {}, Asking(550)).ok());
}

// A GPU whose chip is in no table and with no driver to ask: refused, named,
// never given the open modules on a guess.
TEST(DriverPlan, AGpuOfUnknownGenerationIsRefusedByName) {
  PlanFacts facts = Host("debian", "12", {"9.0"});
  facts.unidentified_gpus = {"0000:3b:00.0 [10de:3001] NVIDIA Corporation Device 3001"};
  auto refused = PlanHostDriver(facts, {}, {});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), ErrorCode::kFailedPrecondition);
  EXPECT_THAT(refused.status().message(),
              HasSubstr("cannot tell which NVIDIA kernel modules drive 0000:3b:00.0 [10de:3001] NVIDIA Corporation "
                        "Device 3001"));
}

TEST(DriverPlan, PascalBesideBlackwellIsRefused) {
  auto plan = PlanHostDriver(Host("ubuntu", "24.04", {"6.1", "12.0"}), {}, {});
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(plan.status().message(), HasSubstr("Blackwell needs the open ones"));
}

// A working driver of the asked branch, from any source, is kept as it is.
TEST(DriverPlan, AMatchingWorkingDriverFromAnySourceIsKept) {
  for (DriverSource source : {DriverSource::kNvidiaRepo, DriverSource::kDistro, DriverSource::kRunfile}) {
    PlanFacts facts = Host("ubuntu", "24.04");
    facts.kernel_module_version = "580.95.05";
    facts.driver_library_version = "580.95.05";
    DriverState state;
    state.source = source;
    state.installed_version = "580.95.05";
    if (source == DriverSource::kNvidiaRepo) {
      state.installed_package = "nvidia-open";
      state.pinned = "580";
    }
    if (source == DriverSource::kDistro) state.packages = {"nvidia-driver-580-open", "libnvidia-compute-580"};
    auto plan = PlanHostDriver(facts, state, {});
    ASSERT_TRUE(plan.ok()) << static_cast<int>(source);
    EXPECT_TRUE(plan->done) << ::testing::PrintToString(Lines(*plan));
    EXPECT_FALSE(plan->reboot_required);
  }
}

TEST(DriverPlan, AnUnpinnedDriverFromNvidiasRepositoryGetsOnlyThePinningPackage) {
  PlanFacts facts = Host("ubuntu", "24.04");
  facts.kernel_module_version = facts.driver_library_version = "580.95.05";
  DriverState state = NvidiaRepo("580.95.05", "");
  auto plan = PlanHostDriver(facts, state, {});
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(Lines(*plan), (std::vector<std::string>{"apt-get update", "apt-get install -y nvidia-driver-pinning-580"}));
}

// A branch before 580 has no pinning package: the same pin as a file.
TEST(DriverPlan, ABranchBefore580IsPinnedByAPreferencesFile) {
  auto plan = PlanHostDriver(Host("ubuntu", "22.04"), {}, Asking(570));
  ASSERT_TRUE(plan.ok());
  std::vector<std::string> lines = Lines(*plan);
  EXPECT_EQ(IndexOf(lines, "apt-get install -y nvidia-driver-pinning-570"), -1) << ::testing::PrintToString(lines);
  EXPECT_LT(IndexOf(lines, "write " + std::string(kPinPreferencesPath)), IndexOf(lines, "apt-get install -y nvidia-open"));
  EXPECT_THAT(DriverPinPreferences("570.*"), HasSubstr("Pin: version 570.*-*"));
  // Installed and pinned that way: done.
  DriverState ours = NvidiaRepo("570.195.03", "570");
  auto again = PlanHostDriver(Host("ubuntu", "22.04"), ours, Asking(570));
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->done);
}

// An unpinned 595 from NVIDIA's repository, not loaded, replaced by 580:
// a downgrade, which apt -y refuses without --allow-downgrades.
TEST(DriverPlan, AnotherBranchFromNvidiasRepositoryIsReplacedAsADowngrade) {
  DriverState state = NvidiaRepo("595.71.05", "");
  auto plan = PlanHostDriver(Host("ubuntu", "24.04"), state, Asking(580));
  ASSERT_TRUE(plan.ok());
  std::vector<std::string> lines = Lines(*plan);
  EXPECT_GE(IndexOf(lines, "apt-get install -y --allow-downgrades nvidia-driver-pinning-580"), 0)
      << ::testing::PrintToString(lines);
  EXPECT_GE(IndexOf(lines, "apt-get install -y --allow-downgrades nvidia-open"), 0);
}

// Without --driver-branch a working driver of another branch is kept too.
TEST(DriverPlan, AWorkingDriverOfAnotherBranchIsKeptUnlessABranchIsAsked) {
  PlanFacts facts = Host("ubuntu", "24.04");
  facts.kernel_module_version = facts.driver_library_version = "595.71.05";
  DriverState state = State(DriverSource::kDistro, "595.71.05", {"nvidia-driver-595-open"});
  auto kept = PlanHostDriver(facts, state, {});
  ASSERT_TRUE(kept.ok());
  EXPECT_TRUE(kept->done);
  EXPECT_THAT(kept->notes.front(), HasSubstr("kept the working 595 driver"));

  state.cuda_processes = {"4242, python", "4243, python"};
  auto refused = PlanHostDriver(facts, state, Asking(580));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), ErrorCode::kFailedPrecondition);
  EXPECT_THAT(refused.status().message(), HasSubstr("breaks every CUDA job until the reboot (2 CUDA processes run now"));
  EXPECT_THAT(refused.status().message(), HasSubstr("--replace-driver"));

  auto replaced = PlanHostDriver(facts, state, Asking(580, true));
  ASSERT_TRUE(replaced.ok());
  std::vector<std::string> lines = Lines(*replaced);
  int purge = IndexOf(lines, "apt-get purge -y nvidia-driver-595-open");
  int pin = IndexOf(lines, "apt-get install -y --allow-downgrades nvidia-driver-pinning-580");
  ASSERT_GE(purge, 0) << ::testing::PrintToString(lines);
  EXPECT_LT(purge, pin);
  EXPECT_LT(pin, IndexOf(lines, "apt-get install -y --allow-downgrades nvidia-open"));
  EXPECT_TRUE(replaced->reboot_required);
}

TEST(DriverPlan, ARunfileDriverIsUninstalledBeforeTheReplacement) {
  PlanFacts facts = Host("ubuntu", "22.04");
  facts.kernel_module_version = "550.127.05";
  facts.driver_library_version = "550.127.05";
  DriverState state = State(DriverSource::kRunfile, "550.127.05");
  auto refused = PlanHostDriver(facts, state, Asking(580));
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("NVIDIA's .run installer"));
  auto plan = PlanHostDriver(facts, state, Asking(580, true));
  ASSERT_TRUE(plan.ok());
  std::vector<std::string> lines = Lines(*plan);
  EXPECT_LT(IndexOf(lines, "nvidia-uninstall --silent"), IndexOf(lines, "apt-get install -y --allow-downgrades nvidia-driver-pinning-580"));
}

// A loaded module whose user space does not answer (mismatch, removed) is in
// use all the same: replacing it needs the flag.
TEST(DriverPlan, ABrokenLoadedDriverStillNeedsReplaceDriver) {
  PlanFacts facts = Host("ubuntu", "24.04");
  facts.kernel_module_version = "580.95.05";
  facts.driver_library_version = "580.105.08";
  DriverState state = State(DriverSource::kDistro, "580.105.08", {"nvidia-driver-580"});
  auto refused = PlanHostDriver(facts, state, {});
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("NVIDIA kernel module 580.95.05 (user space 580.105.08)"));
}

TEST(DriverPlan, OurOwnInstallWaitsForTheReboot) {
  PlanFacts facts = Host("debian", "12");
  DriverState state = NvidiaRepo("580.105.08", "580");
  auto plan = PlanHostDriver(facts, state, {});
  ASSERT_TRUE(plan.ok());
  EXPECT_TRUE(plan->done);
  EXPECT_TRUE(plan->reboot_required);
  facts.kernel_module_version = facts.driver_library_version = "580.105.08";
  plan = PlanHostDriver(facts, state, {});
  ASSERT_TRUE(plan.ok());
  EXPECT_TRUE(plan->done);
  EXPECT_FALSE(plan->reboot_required);
}

TEST(DriverPlan, SecureBootIsRefusedWithTheEnrolmentStepsUnlessEnrolled) {
  for (const char* os : {"ubuntu", "debian"}) {
    PlanFacts facts = Host(os, std::string(os) == "ubuntu" ? "24.04" : "12");
    facts.secure_boot = true;
    auto refused = PlanHostDriver(facts, FreshState(facts), {});
    ASSERT_FALSE(refused.ok()) << os;
    EXPECT_EQ(refused.status().code(), ErrorCode::kFailedPrecondition);
    EXPECT_THAT(refused.status().message(), HasSubstr("mokutil --import"));
    EXPECT_THAT(refused.status().message(), HasSubstr("--secure-boot-enrolled"));
    auto enrolled = PlanHostDriver(facts, FreshState(facts), [] { DriverRequest r; r.secure_boot_enrolled = true; return r; }());
    ASSERT_TRUE(enrolled.ok());
    EXPECT_GE(IndexOf(Lines(*enrolled), "apt-get install -y nvidia-open"), 0);
  }
  // A kept driver needs no new module: Secure Boot does not matter then.
  PlanFacts facts = Host("ubuntu", "24.04");
  facts.secure_boot = true;
  facts.kernel_module_version = facts.driver_library_version = "580.95.05";
  EXPECT_TRUE(PlanHostDriver(facts, State(DriverSource::kDistro, "580.95.05"), {}).ok());
}

TEST(DriverPlan, ProxmoxGetsItsHeadersAndLoadsNvidiaUvmAtBoot) {
  PlanFacts facts = Host("debian", "12");
  facts.proxmox_host = true;
  facts.kernel_release = "6.8.12-4-pve";
  DriverState state = FreshState(facts);
  state.uvm_at_boot = false;
  auto plan = PlanHostDriver(facts, state, {});
  ASSERT_TRUE(plan.ok());
  std::vector<std::string> lines = Lines(*plan);
  EXPECT_LT(IndexOf(lines, "apt-get install -y proxmox-headers-6.8.12-4-pve"),
            IndexOf(lines, "apt-get install -y nvidia-open"));
  EXPECT_GE(IndexOf(lines, "write " + std::string(kUvmModulesLoadPath)), 0);
  EXPECT_GE(IndexOf(lines, "write " + std::string(kUvmUdevRulePath)), 0);
  EXPECT_THAT(UvmModulesLoadContent(), HasSubstr("\nnvidia_uvm\n"));
  EXPECT_THAT(UvmUdevRuleContent(), HasSubstr("nvidia-modprobe -c0 -u"));

  // A kept driver still gets the boot files.
  facts.kernel_module_version = facts.driver_library_version = "580.95.05";
  auto kept = PlanHostDriver(facts, state, {});
  ASSERT_TRUE(kept.ok());
  EXPECT_FALSE(kept->done);
  EXPECT_EQ(Lines(*kept), (std::vector<std::string>{"write " + std::string(kUvmModulesLoadPath),
                                                    "write " + std::string(kUvmUdevRulePath)}));
}

// Guests: the host module's exact version, NVIDIA's pinning where it exists,
// unversioned names from 590, and never a kernel or DKMS package.
TEST(DriverPlan, GuestsArePinnedToTheHostModuleAsNvidiaPins) {
  struct Case {
    std::string os, module;
    std::vector<std::string> expected;
  };
  std::vector<Case> cases = {
      {"ubuntu", "550.127.05",
       {"write " + std::string(kPinPreferencesPath), "apt-get update",
        "apt-get install -y --no-install-recommends libnvidia-compute-550 nvidia-utils-550"}},
      {"ubuntu", "580.95.05",
       {"apt-get update", "apt-get install -y --no-install-recommends nvidia-driver-pinning-580.95.05",
        "apt-get install -y --no-install-recommends libnvidia-compute-580 nvidia-utils-580"}},
      {"ubuntu", "595.71.05",
       {"apt-get update", "apt-get install -y --no-install-recommends nvidia-driver-pinning-595.71.05",
        "apt-get install -y --no-install-recommends libnvidia-compute nvidia-headless-no-dkms-open"}},
      {"debian", "550.127.05",
       {"write " + std::string(kPinPreferencesPath), "apt-get update",
        "apt-get install -y --no-install-recommends nvidia-driver-cuda"}},
      {"debian", "580.95.05",
       {"apt-get update", "apt-get install -y --no-install-recommends nvidia-driver-pinning-580.95.05",
        "apt-get install -y --no-install-recommends nvidia-driver-cuda"}},
      {"debian", "595.71.05",
       {"apt-get update", "apt-get install -y --no-install-recommends nvidia-driver-pinning-595.71.05",
        "apt-get install -y --no-install-recommends nvidia-driver-cuda"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.os + " under " + c.module);
    PlanFacts facts = Host(c.os, c.os == "ubuntu" ? "24.04" : "12");
    facts.container_guest = true;
    facts.kernel_module_version = c.module;
    facts.kernel_module_open = true;
    auto plan = PlanGuestDriver(facts, {});
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    EXPECT_EQ(Lines(*plan), c.expected);
    for (const std::string& line : Lines(*plan)) {
      EXPECT_EQ(line.find("dkms "), std::string::npos) << line;
      EXPECT_EQ(line.find("headers"), std::string::npos) << line;
      EXPECT_EQ(line.find("nvidia-open"), std::string::npos) << line;
    }
    if (c.module.starts_with("550")) {
      EXPECT_THAT(DriverPinPreferences(c.module), HasSubstr("Pin: version 550.127.05-*"));
    }
    // Installed and pinned: done.
    DriverState state;
    for (const std::string& p : GuestDriverPackages(facts, c.module)) state.guest_installed[p] = c.module;
    state.guest_pin_present = true;
    auto done = PlanGuestDriver(facts, state);
    ASSERT_TRUE(done.ok());
    EXPECT_TRUE(done->done);
  }
}

TEST(DriverPlan, DriverForCudaIsTheKeptOrPlannedOne) {
  PlanFacts facts = Host("ubuntu", "24.04");
  EXPECT_EQ(DriverForCuda(facts, {}, true), "580");
  EXPECT_EQ(DriverForCuda(facts, {}, false), std::nullopt);
  facts.kernel_module_version = facts.driver_library_version = "550.127.05";
  EXPECT_EQ(DriverForCuda(facts, {}, true), "550.127.05");  // kept: CUDA 13 is then refused
  EXPECT_EQ(DriverForCuda(facts, Asking(580), true), "580");
  facts.container_guest = true;
  EXPECT_EQ(DriverForCuda(facts, Asking(580), true), "550.127.05");
}

TEST(DriverBranches, ParseAndGpuNeeds) {
  EXPECT_EQ(DriverBranchOf("580"), 580);
  EXPECT_EQ(DriverBranchOf("590.44.01"), 590);
  EXPECT_EQ(DriverBranchOf("abc"), std::nullopt);
  EXPECT_EQ(DriverBranchOf("58x"), std::nullopt);
  EXPECT_TRUE(ModuleNeedsOf({"7.0"}).before_turing);
  EXPECT_FALSE(ModuleNeedsOf({"7.5"}).before_turing);
  EXPECT_TRUE(ModuleNeedsOf({"10.0"}).blackwell);
  EXPECT_TRUE(ModuleNeedsOf({"12.0"}).blackwell);
  EXPECT_FALSE(ModuleNeedsOf({"9.0"}).blackwell);
}

TEST(DebianSources, ContribFromEitherFormat) {
  // Debian 12's default one-line sources.list, without contrib.
  ContribStatus plain = DebianContribStatus({{"sources.list",
                                              "deb http://mirror.invalid/debian bookworm main\n"
                                              "deb http://mirror.invalid/debian bookworm-updates main\n"
                                              "# deb-src http://mirror.invalid/debian bookworm main\n"
                                              "deb http://security.invalid/debian-security bookworm-security main\n"},
                                             {"cuda.list", "deb [signed-by=/usr/share/keyrings/cuda.gpg] https://repo.invalid/ /\n"}});
  EXPECT_FALSE(plain.enabled);
  EXPECT_EQ(plain.contrib_list,
            "# gpuctl: NVIDIA's driver packages for Debian need contrib\n"
            "deb http://mirror.invalid/debian bookworm contrib\n"
            "deb http://mirror.invalid/debian bookworm-updates contrib\n"
            "deb http://security.invalid/debian-security bookworm-security contrib\n");
  // Debian 13's deb822 debian.sources.
  ContribStatus deb822 = DebianContribStatus({{"debian.sources",
                                               "Types: deb deb-src\n"
                                               "URIs: http://mirror.invalid/debian\n"
                                               "Suites: trixie trixie-updates\n"
                                               "Components: main\n"
                                               "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n"
                                               "\n"
                                               "Types: deb\n"
                                               "URIs: http://old.invalid/debian\n"
                                               "Suites: trixie\n"
                                               "Components: main\n"
                                               "Enabled: no\n"}});
  EXPECT_FALSE(deb822.enabled);
  EXPECT_THAT(deb822.contrib_list,
              HasSubstr("deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://mirror.invalid/debian "
                        "trixie-updates contrib\n"));
  EXPECT_EQ(deb822.contrib_list.find("old.invalid"), std::string::npos);
  EXPECT_TRUE(DebianContribStatus({{"debian.sources",
                                    "Types: deb\nURIs: http://m.invalid/debian\nSuites: trixie\n"
                                    "Components: main contrib non-free-firmware\n"}})
                  .enabled);
  EXPECT_TRUE(DebianContribStatus({{"sources.list", "deb [arch=amd64] http://m.invalid/debian bookworm main contrib\n"}}).enabled);
  // Files of other suffixes are not apt's.
  EXPECT_FALSE(DebianContribStatus({{"x.list.save", "deb http://m.invalid/debian bookworm main contrib\n"}}).enabled);
}

TEST(SecureBoot, FromTheEfiVariable) {
  EXPECT_EQ(SecureBootFromEfiVar(std::string("\x06\x00\x00\x00\x01", 5)), true);
  EXPECT_EQ(SecureBootFromEfiVar(std::string("\x06\x00\x00\x00\x00", 5)), false);
  EXPECT_EQ(SecureBootFromEfiVar("abc"), std::nullopt);
}

}  // namespace
}  // namespace gpuctl::provision
