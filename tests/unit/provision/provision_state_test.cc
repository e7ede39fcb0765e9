#include <gtest/gtest.h>

#include "agents/provision/passthrough.h"
#include "agents/provision/provision_state.h"
#include "agents/sys/files.h"
#include "tests/fakes/temp_dir.h"

namespace gpuctl::provision {
namespace {

TEST(ProvisionState, RoundTripsThroughTheFile) {
  testing::TempDir dir;
  ProvisionState state;
  state.steps["driver"] = StepRecord{"done", "nvidia-open 590.44.01-1 installed and held", 1700000000000};
  state.steps["cuda"] = StepRecord{"failed", "apt-get exited 100", 1700000000500};
  state.failed_step = "cuda";
  StepFailure failure;
  failure.command.argv = {"apt-get", "install", "-y", "cuda-toolkit-13-1"};
  failure.command.env = {{"DEBIAN_FRONTEND", "noninteractive"}};
  failure.exit_code = 100;
  failure.output_tail = "E: Unable to fetch some archives";
  failure.message = "exited with status 100";
  state.failure = failure;
  const std::string path = ProvisionStatePath(dir.path() + "/state");
  ASSERT_TRUE(SaveProvisionState(path, state).ok());
  auto loaded = LoadProvisionState(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->failed_step, "cuda");
  EXPECT_EQ(loaded->steps["driver"].detail, "nvidia-open 590.44.01-1 installed and held");
  EXPECT_EQ(loaded->steps["cuda"].updated_unix_ms, 1700000000500);
  ASSERT_TRUE(loaded->failure);
  EXPECT_EQ(loaded->failure->command.argv, failure.command.argv);
  EXPECT_EQ(loaded->failure->command.env, failure.command.env);
  EXPECT_EQ(loaded->failure->exit_code, 100);
  // No temp file is left beside it.
  EXPECT_FALSE(sys::PathExists(path + ".tmp"));
}

TEST(ProvisionState, MissingIsEmptyAndGarbageIsAnError) {
  testing::TempDir dir;
  auto missing = LoadProvisionState(dir.path() + "/none/state.json");
  ASSERT_TRUE(missing.ok());
  EXPECT_TRUE(missing->steps.empty());
  dir.WriteFile("state.json", "{\"version\": 7}");
  auto wrong = LoadProvisionState(dir.path() + "/state.json");
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), ErrorCode::kInvalidArgument);
  dir.WriteFile("state2.json", "not json");
  EXPECT_FALSE(LoadProvisionState(dir.path() + "/state2.json").ok());
}

constexpr const char* kDevices = "Character devices:\n195 nvidia-frontend\n236 nvidia-uvm\n\nBlock devices:\n  8 sd\n";

TEST(Passthrough, ReadsMajorsFromProcDevices) {
  auto majors = ParseCharDeviceMajors(std::string(kDevices) + "259 blkext\n");
  EXPECT_EQ(majors["nvidia"], 195);
  EXPECT_EQ(majors["nvidia-uvm"], 236);
  EXPECT_FALSE(majors.contains("blkext") && majors["blkext"] != 259);
}

TEST(Passthrough, CompleteConfigNeedsNothing) {
  PassthroughInput input;
  input.proc_devices = kDevices;
  input.dev_nodes = {"nvidia0", "nvidia-uvm"};
  input.container_config =
      "lxc.cgroup2.devices.allow: c 195:* rwm\nlxc.cgroup2.devices.allow:   c 236:* rwm\n"
      "lxc.mount.entry: /dev/nvidia0 dev/nvidia0 none bind,optional,create=file\n"
      "lxc.mount.entry = /dev/nvidia-uvm dev/nvidia-uvm none bind,optional,create=file\n";
  EXPECT_TRUE(MissingPassthroughLines(input).empty());
}

TEST(Passthrough, PrintsExactlyTheMissingLines) {
  PassthroughInput input;
  input.proc_devices = kDevices;
  input.dev_nodes = {"nvidia0", "nvidia1", "nvidia-uvm"};
  input.container_config = "lxc.cgroup2.devices.allow: c 195:* rwm\n"
                           "lxc.mount.entry: /dev/nvidia0 dev/nvidia0 none bind,optional,create=file\n"
                           "[snapshot]\nlxc.cgroup2.devices.allow: c 236:* rwm\n";
  EXPECT_EQ(MissingPassthroughLines(input),
            (std::vector<std::string>{"lxc.cgroup2.devices.allow: c 236:* rwm",
                                      "lxc.mount.entry: /dev/nvidia1 dev/nvidia1 none bind,optional,create=file",
                                      "lxc.mount.entry: /dev/nvidia-uvm dev/nvidia-uvm none bind,optional,create=file"}));
}

TEST(Passthrough, ProxmoxDeviceEntriesCoverTheirNodes) {
  PassthroughInput input;
  input.proc_devices = kDevices;
  input.dev_nodes = {"nvidia0", "nvidia-uvm"};
  input.container_config = "dev0: /dev/nvidia0\ndev1: /dev/nvidia-uvm,mode=0666\n";
  EXPECT_TRUE(MissingPassthroughLines(input).empty());
  input.container_config = "lxc.cgroup2.devices.allow: c 195:* r\n";  // no write access
  EXPECT_EQ(MissingPassthroughLines(input).front(), "lxc.cgroup2.devices.allow: c 195:* rwm");
}

// Before the host loads nvidia_uvm there is no /dev/nvidia-uvm and no major
// for it: the lines are still wanted, and the step says to load the module.
TEST(Passthrough, NvidiaUvmIsWantedBeforeTheHostLoadsIt) {
  PassthroughInput input;
  input.proc_devices = "Character devices:\n195 nvidia-frontend\n";
  input.dev_nodes = {"nvidia0", "nvidiactl"};
  input.container_config = "lxc.cgroup2.devices.allow: c 195:* rwm\n"
                           "lxc.mount.entry: /dev/nvidia0 dev/nvidia0 none bind,optional,create=file\n"
                           "lxc.mount.entry: /dev/nvidiactl dev/nvidiactl none bind,optional,create=file\n";
  EXPECT_EQ(MissingPassthroughLines(input),
            std::vector<std::string>{"lxc.mount.entry: /dev/nvidia-uvm dev/nvidia-uvm none bind,optional,create=file"});
  EXPECT_TRUE(UvmNotLoaded(input));
  input.proc_devices = kDevices;
  EXPECT_FALSE(UvmNotLoaded(input));
  EXPECT_EQ(MissingPassthroughLines(input).front(), "lxc.cgroup2.devices.allow: c 236:* rwm");
}

}  // namespace
}  // namespace gpuctl::provision
