// The steps run for real (the agent's subprocess runner) against the
// stand-ins on PATH: what is invoked and in what order, reruns that do
// nothing, a failure mid-plan and its resume, and a dry run that runs nothing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "agents/provision/cuda_toolkit.h"
#include "agents/provision/provision_state.h"
#include "agents/provision/venv_choice.h"
#include "agents/sys/files.h"
#include "tests/fakes/scoped_env.h"
#include "tests/unit/provision/standin_fixture.h"

namespace gpuctl::provision {
namespace {

using ::testing::HasSubstr;

class ProvisionStandinTest : public StandinTest {};

TEST_F(ProvisionStandinTest, FreshHostRunsEveryStepInOrder) {
  auto result = Provision({});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_TRUE(result->ok) << result->failed_step;
  const std::string keyring = config.state_dir + "/provision/cuda-keyring_1.1-1_all.deb";
  std::vector<std::string> expected = {
      "curl -fsSL --retry 3 -o " + keyring +
          " https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2404/x86_64/cuda-keyring_1.1-1_all.deb",
      "dpkg -i " + keyring,
      "apt-get update",
      // The branch's pinning package first: apt then takes the driver and
      // everything it pulls in from that branch.
      "apt-get install -y nvidia-driver-pinning-580",
      "apt-get install -y nvidia-open",
      "apt-get update",
      "apt-get install -y cuda-toolkit-13-1",
      // No system python3 known here: uv downloads one, beside the venv.
      "uv venv " + venv() + " --python 3.12 --python-preference managed",
      // py-spy for hang dumps: no index flag, uv's configured index.
      "uv pip install --python " + venv() + "/bin/python py-spy",
      "uv pip install --python " + venv() + "/bin/python torch==2.10.0 --index-url https://download.pytorch.org/whl/cu130",
  };
  EXPECT_EQ(Changing(TakeInvocations()), expected);
  for (const char* step : {"driver", "cuda", "venv", "torch"}) {
    const StepReport* last = LastReport(*result, step);
    ASSERT_NE(last, nullptr) << step;
    EXPECT_EQ(last->phase, StepPhase::kDone) << step << ": " << last->detail;
  }
  EXPECT_THAT(LastReport(*result, "torch")->detail, HasSubstr("2.10.0+cu130"));
  auto profile = sys::ReadWholeFile(config.system_root + "/etc/profile.d/gpuctl-cuda.sh");
  ASSERT_TRUE(profile.ok());
  EXPECT_THAT(*profile, HasSubstr("export PATH=/usr/local/cuda-13.1/bin${PATH:+:${PATH}}"));
  EXPECT_THAT(*profile, HasSubstr("LD_LIBRARY_PATH=/usr/local/cuda-13.1/lib64"));
  // No module was loaded: the new one loads at the next boot.
  EXPECT_TRUE(result->reboot_required);
  EXPECT_THAT(LastReport(*result, "driver")->detail, HasSubstr("nvidia-open 580.105.08 installed, pinned to the 580 branch"));

  // Each step streams planned (with its commands), running, done.
  std::vector<std::string> driver_phases;
  for (const auto& r : reports) {
    if (r.step == "driver") driver_phases.push_back(StepPhaseName(r.phase));
  }
  EXPECT_EQ(driver_phases, (std::vector<std::string>{"planned", "running", "done"}));
  EXPECT_EQ(reports.front().commands.size(), 5u);
}

TEST_F(ProvisionStandinTest, SecondRunIsANoOp) {
  ASSERT_TRUE(Provision({}).ok());
  TakeInvocations();
  auto again = Provision({});
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->ok);
  EXPECT_EQ(Changing(TakeInvocations()), std::vector<std::string>{});
  for (const auto& r : again->steps) EXPECT_EQ(r.phase, StepPhase::kSkipped) << r.step << ": " << r.detail;
}

TEST_F(ProvisionStandinTest, ARunfileToolkitIsNotInstalledAgainOnlyPutOnPath) {
  facts.cuda_toolkit_versions = {"13.1"};  // /usr/local/cuda-13.1 without a package
  ProvisionOptions options;
  options.steps = {"cuda"};
  auto result = Provision(options);
  ASSERT_TRUE(result.ok());
  ASSERT_TRUE(result->ok) << result->failed_step;
  EXPECT_EQ(Changing(TakeInvocations()), std::vector<std::string>{});
  EXPECT_THAT(LastReport(*result, "cuda")->detail, HasSubstr("CUDA 13.1 (installed without a package) installed"));
  EXPECT_TRUE(sys::PathExists(config.system_root + "/etc/profile.d/gpuctl-cuda.sh"));
}

TEST_F(ProvisionStandinTest, FailureMidPlanStopsWithTheCommandAndARerunResumes) {
  {
    testing::ScopedEnv fail("GPUCTL_STANDIN_FAIL", "cuda-toolkit");
    auto result = Provision({});
    ASSERT_TRUE(result.ok());
    EXPECT_FALSE(result->ok);
    EXPECT_EQ(result->failed_step, "cuda");
    const StepReport* cuda = LastReport(*result, "cuda");
    ASSERT_TRUE(cuda && cuda->failure);
    EXPECT_EQ(cuda->failure->command.argv,
              (std::vector<std::string>{"apt-get", "install", "-y", "cuda-toolkit-13-1"}));
    EXPECT_EQ(cuda->failure->exit_code, 100);
    EXPECT_THAT(cuda->failure->output_tail, HasSubstr("E: Unable to fetch some archives"));
    EXPECT_THAT(cuda->failure->message, HasSubstr("exited with status 100"));
    EXPECT_EQ(LastReport(*result, "venv")->detail, "not reached");
    EXPECT_EQ(LastReport(*result, "driver")->phase, StepPhase::kDone);
    auto state = LoadProvisionState(ProvisionStatePath(config.state_dir));
    ASSERT_TRUE(state.ok());
    EXPECT_EQ(state->failed_step, "cuda");
    EXPECT_EQ(state->steps["driver"].phase, "done");
    ASSERT_TRUE(state->failure.has_value());
    EXPECT_EQ(state->failure->exit_code, 100);
  }
  TakeInvocations();

  auto rerun = Provision({});
  ASSERT_TRUE(rerun.ok());
  EXPECT_TRUE(rerun->ok) << rerun->failed_step;
  EXPECT_EQ(LastReport(*rerun, "driver")->phase, StepPhase::kSkipped);
  std::vector<std::string> changed = Changing(TakeInvocations());
  EXPECT_FALSE(Contains(changed, "apt-get install -y nvidia-open"));
  EXPECT_EQ(IndexOf(changed, "apt-get install -y cuda-toolkit-13-1"), 1) << "after one apt-get update";
  bool resumed_note = false;
  for (const auto& r : reports) {
    for (const auto& note : r.notes) resumed_note = resumed_note || (r.step == "cuda" && note.find("resuming here") == 0);
  }
  EXPECT_TRUE(resumed_note);
  auto state = LoadProvisionState(ProvisionStatePath(config.state_dir));
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(state->failed_step, "");
  EXPECT_EQ(state->steps["torch"].phase, "done");
}

// The driver's DKMS build needs the running kernel's headers: installed
// before the driver, by Proxmox's name on a Proxmox host.
TEST_F(ProvisionStandinTest, MissingKernelHeadersAreInstalledBeforeTheDriver) {
  facts.kernel_release = "6.8.0-45-generic";
  ProvisionOptions options;
  options.steps = {"driver"};
  options.dry_run = true;
  auto result = Provision(options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  std::vector<std::string> planned;
  for (const auto& command : LastReport(*result, "driver")->commands) {
    std::string line;
    for (const std::string& arg : command.argv) line += (line.empty() ? "" : " ") + arg;
    planned.push_back(line);
  }
  auto at = [&](const std::string& what) {
    for (size_t i = 0; i < planned.size(); ++i) {
      if (planned[i].find(what) != std::string::npos) return static_cast<int>(i);
    }
    return -1;
  };
  ASSERT_GE(at("install -y linux-headers-6.8.0-45-generic"), 0) << ::testing::PrintToString(planned);
  EXPECT_LT(at("install -y linux-headers-6.8.0-45-generic"), at("install -y nvidia-open"));
  EXPECT_GT(at("install -y linux-headers-6.8.0-45-generic"), at("apt-get update"));

  TakeInvocations();
  facts.proxmox_host = true;
  facts.kernel_release = "6.8.12-4-pve";
  result = Provision(options);
  ASSERT_TRUE(result.ok());
  bool proxmox_headers = false;
  for (const auto& command : LastReport(*result, "driver")->commands) {
    for (const std::string& arg : command.argv) proxmox_headers = proxmox_headers || arg == "proxmox-headers-6.8.12-4-pve";
  }
  EXPECT_TRUE(proxmox_headers);

  facts.kernel_headers_installed = true;
  result = Provision(options);
  ASSERT_TRUE(result.ok());
  for (const auto& command : LastReport(*result, "driver")->commands) {
    for (const std::string& arg : command.argv) EXPECT_EQ(arg.find("-headers-"), std::string::npos) << arg;
  }
}

// A minimal Debian 12 host (no curl, contrib off, no headers): each gap is
// filled in the order the next command needs it, then the branch is pinned
// before the driver is installed.
TEST_F(ProvisionStandinTest, AMinimalDebianHostGetsWhatTheDriverNeedsInOrder) {
  facts.os_id = "debian";
  facts.os_version_id = "12";
  facts.kernel_release = "6.1.0-26-amd64";
  ASSERT_TRUE(sys::RemoveFile(config.system_root + "/usr/bin/curl").ok());
  dir().WriteFile("root/etc/apt/sources.list", "deb http://mirror.invalid/debian bookworm main\n"
                                               "deb http://mirror.invalid/debian-security bookworm-security main\n");
  ProvisionOptions options;
  options.steps = {"driver"};
  auto result = Provision(options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_TRUE(result->ok) << LastReport(*result, "driver")->detail;
  std::vector<std::string> planned;
  for (const StepReport& report : reports) {
    if (report.step != "driver" || report.phase != StepPhase::kPlanned) continue;
    for (const auto& command : report.commands) {
      std::string line;
      for (const std::string& arg : command.argv) line += (line.empty() ? "" : " ") + arg;
      planned.push_back(line);
    }
  }
  const std::string keyring = config.state_dir + "/provision/cuda-keyring_1.1-1_all.deb";
  EXPECT_EQ(planned, (std::vector<std::string>{
                         "apt-get update",
                         "apt-get install -y curl ca-certificates",
                         "curl -fsSL --retry 3 -o " + keyring +
                             " https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/"
                             "cuda-keyring_1.1-1_all.deb",
                         "dpkg -i " + keyring,
                         "write " + config.system_root + "/etc/apt/sources.list.d/gpuctl-contrib.list",
                         "apt-get update",
                         "apt-get install -y linux-headers-6.1.0-26-amd64",
                         "apt-get install -y nvidia-driver-pinning-580",
                         "apt-get install -y nvidia-open",
                     }));
  auto contrib = sys::ReadWholeFile(config.system_root + "/etc/apt/sources.list.d/gpuctl-contrib.list");
  ASSERT_TRUE(contrib.ok());
  EXPECT_THAT(*contrib, HasSubstr("deb http://mirror.invalid/debian bookworm contrib\n"));
  EXPECT_THAT(*contrib, HasSubstr("deb http://mirror.invalid/debian-security bookworm-security contrib\n"));

  // The rerun finds contrib on, the driver pinned and installed: nothing to do.
  TakeInvocations();
  auto again = Provision(options);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(LastReport(*again, "driver")->phase, StepPhase::kSkipped) << LastReport(*again, "driver")->detail;
  EXPECT_EQ(Changing(TakeInvocations()), std::vector<std::string>{});
}

// --driver-branch on a host running another branch: refused (exit 2) while
// the driver is in use, replaced with --replace-driver.
TEST_F(ProvisionStandinTest, ADriverInUseIsReplacedOnlyWithReplaceDriver) {
  Installed("cuda-keyring", "1.1-1");
  Installed("nvidia-driver-595-open", "595.71.05-0ubuntu1");
  Installed("libnvidia-compute-595", "595.71.05-0ubuntu1");
  facts.kernel_module_version = "595.71.05";
  facts.driver_library_version = "595.71.05";
  ProvisionOptions options;
  options.steps = {"driver"};
  auto kept = Provision(options);
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(LastReport(*kept, "driver")->phase, StepPhase::kSkipped);
  EXPECT_THAT(LastReport(*kept, "driver")->detail, HasSubstr("595.71.05 (from the distribution's packages)"));

  options.driver_branch = "580";
  auto refused = Provision(options);
  ASSERT_TRUE(refused.ok());
  EXPECT_TRUE(refused->refused);
  EXPECT_THAT(LastReport(*refused, "driver")->failure->message, HasSubstr("--replace-driver"));
  EXPECT_EQ(Changing(TakeInvocations()), std::vector<std::string>{});

  options.replace_driver = true;
  auto replaced = Provision(options);
  ASSERT_TRUE(replaced.ok());
  ASSERT_TRUE(replaced->ok) << LastReport(*replaced, "driver")->detail;
  EXPECT_TRUE(replaced->reboot_required);
  EXPECT_EQ(Changing(TakeInvocations()),
            (std::vector<std::string>{"apt-get update", "apt-get purge -y libnvidia-compute-595 nvidia-driver-595-open",
                                      "apt-get install -y --allow-downgrades nvidia-driver-pinning-580",
                                      "apt-get install -y --allow-downgrades nvidia-open"}));
}

// A host whose python3 PyTorch supports gets its venv on it: no download,
// which a host without a route to uv's Python builds needs.
TEST_F(ProvisionStandinTest, TheVenvUsesTheSystemPythonWhenPyTorchSupportsIt) {
  facts.system_python = "3.11.2";  // Debian 12
  ProvisionOptions options;
  options.steps = {"venv"};
  auto result = Provision(options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_TRUE(result->ok) << result->failed_step;
  EXPECT_EQ(Changing(TakeInvocations()),
            (std::vector<std::string>{"uv venv " + venv() + " --python 3.11 --python-preference only-system",
                                      "uv pip install --python " + venv() + "/bin/python py-spy"}));
}

// A venv made before the step installed py-spy: only py-spy is added, the
// venv (and whatever is in it) is kept.
TEST_F(ProvisionStandinTest, AVenvWithoutPySpyGetsOnlyPySpy) {
  ASSERT_EQ(runner->Run({"uv", "venv", venv(), "--python", "3.12"})->exit_code, 0);
  TakeInvocations();
  ProvisionOptions options;
  options.steps = {"venv"};
  auto result = Provision(options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_TRUE(result->ok) << LastReport(*result, "venv")->detail;
  EXPECT_EQ(Changing(TakeInvocations()),
            std::vector<std::string>{"uv pip install --python " + venv() + "/bin/python py-spy"});
  const StepReport& planned = reports.front();
  EXPECT_EQ(planned.phase, StepPhase::kPlanned);
  EXPECT_EQ(planned.detail, venv() + " exists (Python 3.12.3), but has no py-spy (hang dumps need it)");
  EXPECT_THAT(planned.notes, ::testing::Contains("py-spy (hang dumps: gpuctl train dump)"));
  const StepReport* done = LastReport(*result, "venv");
  EXPECT_EQ(done->phase, StepPhase::kDone);
  EXPECT_EQ(done->detail, venv() + " exists (Python 3.12.3, py-spy 0.4.3)");
}

TEST_F(ProvisionStandinTest, AVenvWithPySpyIsDoneWithNothingPlanned) {
  ASSERT_EQ(runner->Run({"uv", "venv", venv(), "--python", "3.12"})->exit_code, 0);
  ASSERT_EQ(runner->Run({"uv", "pip", "install", "--python", venv() + "/bin/python", "py-spy"})->exit_code, 0);
  TakeInvocations();
  ProvisionOptions options;
  options.steps = {"venv"};
  auto result = Provision(options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_TRUE(result->ok);
  std::vector<std::string> invoked = TakeInvocations();
  EXPECT_TRUE(Contains(invoked, "py-spy --version")) << ::testing::PrintToString(invoked);
  EXPECT_EQ(Changing(invoked), std::vector<std::string>{});
  const StepReport* venv_step = LastReport(*result, "venv");
  ASSERT_NE(venv_step, nullptr);
  EXPECT_EQ(venv_step->phase, StepPhase::kSkipped);
  EXPECT_TRUE(venv_step->commands.empty());
  EXPECT_EQ(venv_step->detail, venv() + " exists (Python 3.12.3, py-spy 0.4.3)");
}

// uv venv writes into the directory as root: one with files that is not a
// venv is refused before anything runs; an empty one is used.
TEST_F(ProvisionStandinTest, AVenvDirectoryWithOtherFilesInItIsRefused) {
  const std::string seen = config.system_root + venv();  // the target's view of --venv
  ASSERT_TRUE(sys::EnsureDir(seen, 0755).ok());
  ASSERT_TRUE(sys::WriteFileAtomic(seen + "/thesis.tex", "years of work\n").ok());
  ProvisionOptions options;
  options.steps = {"venv"};
  auto result = Provision(options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_TRUE(result->refused);
  EXPECT_THAT(LastReport(*result, "venv")->failure->message, HasSubstr("no pyvenv.cfg, so not a venv"));
  EXPECT_EQ(Changing(TakeInvocations()), std::vector<std::string>{});

  ASSERT_TRUE(sys::RemoveFile(seen + "/thesis.tex").ok());
  auto empty = Provision(options);
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_TRUE(empty->ok) << empty->failed_step;
}

TEST_F(ProvisionStandinTest, WithoutAUsableSystemPythonUvDownloadsOneWhereEveryUserCanReadIt) {
  facts.system_python = "3.9.2";  // Debian 11
  ProvisionOptions options;
  options.steps = {"venv"};
  options.dry_run = true;
  auto result = Provision(options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  const StepReport* venv_step = LastReport(*result, "venv");
  ASSERT_NE(venv_step, nullptr);
  ASSERT_EQ(venv_step->commands.size(), 2u);
  EXPECT_EQ(venv_step->commands[0].env.at("UV_PYTHON_INSTALL_DIR"), ManagedPythonDir(venv()));
  EXPECT_EQ(venv_step->commands[1].argv.back(), "py-spy");
  EXPECT_THAT(venv_step->notes, ::testing::Contains(HasSubstr("(3.9.2): uv downloads Python 3.12")));
}

// A CUDA that NVIDIA never released is refused at plan time, naming why,
// with nothing run that changes the host.
TEST_F(ProvisionStandinTest, ACudaThatNeverExistedIsRefusedBeforeAnythingChanges) {
  ProvisionOptions options;
  options.cuda_version = "12.7";
  options.steps = {"cuda"};
  auto result = Provision(options);
  ASSERT_TRUE(result.ok());
  EXPECT_FALSE(result->ok);
  EXPECT_EQ(Changing(TakeInvocations()), std::vector<std::string>{});
  const StepReport* cuda = LastReport(*result, "cuda");
  ASSERT_NE(cuda, nullptr);
  ASSERT_TRUE(cuda->failure.has_value());
  EXPECT_NE(cuda->failure->message.find("never released"), std::string::npos) << cuda->failure->message;
  EXPECT_TRUE(result->refused);  // exit 2, as for every plan that cannot exist
}

TEST_F(ProvisionStandinTest, DryRunPrintsTheExactCommandsAndRunsNone) {
  ProvisionOptions options;
  options.dry_run = true;
  options.ext = "flash-attn";
  auto result = Provision(options);
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(result->ok);
  EXPECT_EQ(Changing(TakeInvocations()), std::vector<std::string>{});
  EXPECT_FALSE(sys::PathExists(ProvisionStatePath(config.state_dir)));
  ASSERT_EQ(result->steps.size(), 5u);
  for (const auto& r : result->steps) EXPECT_EQ(r.phase, StepPhase::kPlanned) << r.step;
  const StepReport* torch = LastReport(*result, "torch");
  ASSERT_EQ(torch->commands.size(), 1u);
  EXPECT_EQ(torch->commands[0].argv.back(), "https://download.pytorch.org/whl/cu130");
  const StepReport* cuda = LastReport(*result, "cuda");
  EXPECT_EQ(cuda->commands.back().argv,
            (std::vector<std::string>{"write", config.system_root + "/etc/profile.d/gpuctl-cuda.sh"}));
  const StepReport* ext = LastReport(*result, "ext");
  ASSERT_EQ(ext->commands.size(), 2u);
  // The build's own tools first (--no-build-isolation imports them), then the build.
  std::vector<std::string> tools = ext->commands[0].argv;
  ASSERT_EQ(tools.size(), 10u);
  tools[4] = "VENV";
  EXPECT_EQ(tools, (std::vector<std::string>{"uv", "pip", "install", "--python", "VENV", "setuptools", "wheel",
                                             "packaging", "psutil", "ninja"}));
  EXPECT_EQ(ext->commands[1].env.at("FLASH_ATTN_CUDA_ARCHS"), "90");
  EXPECT_EQ(builds->builds.size(), 0u);
  // The driver step already plans the CUDA repository and apt-get update: the
  // cuda step shows only what is its own.
  std::set<std::vector<std::string>> seen;
  for (const auto& r : result->steps) {
    for (const auto& command : r.commands) EXPECT_TRUE(seen.insert(command.argv).second) << r.step;
  }
  ASSERT_GE(cuda->commands.size(), 2u);
  EXPECT_THAT(cuda->commands[cuda->commands.size() - 2].argv, ::testing::Contains(HasSubstr("cuda-toolkit-13-1")));
}

TEST_F(ProvisionStandinTest, RebootIsNeededWhenTheLoadedModuleDiffersFromTheInstalledDriver) {
  Installed("cuda-keyring", "1.1-1");
  Installed("nvidia-driver-pinning-580", "1.0-1");
  Installed("nvidia-open", "580.159.04-1");
  facts.kernel_module_version = "580.95.05";
  facts.driver_library_version = "580.95.05";
  ProvisionOptions options;
  options.steps = {"driver"};
  auto result = Provision(options);
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(result->ok);
  EXPECT_TRUE(result->reboot_required);
  const StepReport* driver = LastReport(*result, "driver");
  ASSERT_FALSE(driver->notes.empty());
  EXPECT_THAT(driver->notes[0], HasSubstr("reboot needed: the loaded kernel module is 580.95.05, the installed driver 580.159.04"));
}

TEST_F(ProvisionStandinTest, ACancelStopsBeforeTheNextCommand) {
  std::atomic<bool> cancel{false};
  sys::RealClock clock;
  Provisioner provisioner(config, *runner, clock, builds.get(), [this] { return facts; });
  auto result = provisioner.Run(
      {}, [&](const StepReport& r) { if (r.step == "driver" && r.phase == StepPhase::kRunning) cancel = true; },
      &cancel);
  ASSERT_TRUE(result.ok());
  EXPECT_FALSE(result->ok);
  EXPECT_EQ(result->failed_step, "driver");
  EXPECT_THAT(LastReport(*result, "driver")->failure->message, HasSubstr("cancelled before 'curl"));
  EXPECT_EQ(Changing(TakeInvocations()), std::vector<std::string>{});
}

TEST_F(ProvisionStandinTest, OneRunAtATime) {
  sys::RealClock clock;
  Provisioner provisioner(config, *runner, clock, builds.get(), [this] { return facts; });
  std::optional<Status> second;
  auto first = provisioner.Run({}, [&](const StepReport&) {
    if (second) return;
    // From another thread: the run in progress holds the agent's one slot.
    std::thread([&] { second = provisioner.Run({}, {}).status(); }).join();
  });
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(first->ok);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->code(), ErrorCode::kAlreadyExists);
  EXPECT_TRUE(provisioner.StopAndWait(std::chrono::milliseconds(100)));
  EXPECT_EQ(provisioner.Run({}, {}).status().code(), ErrorCode::kUnavailable);
}

}  // namespace
}  // namespace gpuctl::provision
