// --container VMID on a Proxmox host: the passthrough check against a fixture
// /etc/pve/lxc/200.conf, and in-container steps through `pct exec`.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>

#include "agents/sys/confined_root.h"
#include "tests/fakes/scoped_env.h"
#include "tests/unit/provision/standin_fixture.h"

namespace gpuctl::provision {
namespace {

using ::testing::HasSubstr;

constexpr const char* kProcDevices =
    "Character devices:\n  1 mem\n  4 /dev/vc/0\n195 nvidia-frontend\n234 nvidia-caps\n236 nvidia-uvm\n\n"
    "Block devices:\n  8 sd\n";

class ProvisionContainerTest : public StandinTest {
 protected:
  ProvisionContainerTest()
      : running_("FAKE_PCT_RUNNING", "200"),
        pct_root_("FAKE_PCT_ROOT", dir().path() + "/lxc"),
        pct_log_("FAKE_PCT_LOG", dir().path() + "/pct.log") {
    dir().WriteFile("root/proc/devices", kProcDevices);
    for (const char* node : {"nvidia0", "nvidiactl", "nvidia-uvm", "nvidia-uvm-tools"}) {
      dir().WriteFile(std::string("root/dev/") + node, "");
    }
    dir().MakeDir("root/dev/nvidia-caps");
    dir().WriteFile("lxc/200/rootfs/etc/os-release", "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\nVERSION_ID=\"12\"\n");
    facts.os_id = "proxmox-should-not-be-used";
    facts.proxmox_host = true;
    facts.kernel_module_version = "590.44.01";  // the host's, which the container's user space must match
    facts.driver_library_version = "590.44.01";
  }

  std::vector<std::string> PctCalls() const {
    std::ifstream in(dir().path() + "/pct.log");
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }

  testing::ScopedEnv running_;
  testing::ScopedEnv pct_root_;
  testing::ScopedEnv pct_log_;
};

TEST_F(ProvisionContainerTest, MissingPassthroughLinesAreRefusedAndPrintedExactly) {
  dir().WriteFile("root/etc/pve/lxc/200.conf",
                  "arch: amd64\nhostname: trainer\nmemory: 65536\n"
                  "lxc.cgroup2.devices.allow: c 195:* rwm\n"
                  "lxc.mount.entry: /dev/nvidia0 dev/nvidia0 none bind,optional,create=file\n");
  ProvisionOptions options;
  options.container = "200";
  options.steps = {"driver"};
  auto result = Provision(options);
  ASSERT_TRUE(result.ok());
  EXPECT_FALSE(result->ok);
  EXPECT_TRUE(result->refused);
  EXPECT_EQ(result->failed_step, "passthrough");
  const std::string& message = LastReport(*result, "passthrough")->failure->message;
  EXPECT_THAT(message, HasSubstr("add these 6 lines to /etc/pve/lxc/200.conf"));
  EXPECT_THAT(message, HasSubstr(
      "\n  lxc.cgroup2.devices.allow: c 236:* rwm"
      "\n  lxc.cgroup2.devices.allow: c 234:* rwm"
      "\n  lxc.mount.entry: /dev/nvidia-caps dev/nvidia-caps none bind,optional,create=dir"
      "\n  lxc.mount.entry: /dev/nvidia-uvm dev/nvidia-uvm none bind,optional,create=file"
      "\n  lxc.mount.entry: /dev/nvidia-uvm-tools dev/nvidia-uvm-tools none bind,optional,create=file"
      "\n  lxc.mount.entry: /dev/nvidiactl dev/nvidiactl none bind,optional,create=file"));
  EXPECT_EQ(LastReport(*result, "driver")->detail, "not reached");
  EXPECT_TRUE(PctCalls().empty());
}

// Container 200's config with every nvidia device allowed and bind-mounted:
// the passthrough step has nothing to add.
constexpr const char* kFullPassthroughConf =
    "lxc.cgroup2.devices.allow: c 195:* rwm\nlxc.cgroup2.devices.allow: c 236:* rwm\n"
    "lxc.cgroup2.devices.allow: c 234:* rwm\n"
    "lxc.mount.entry: /dev/nvidia0 dev/nvidia0 none bind,optional,create=file\n"
    "lxc.mount.entry: /dev/nvidiactl dev/nvidiactl none bind,optional,create=file\n"
    "lxc.mount.entry: /dev/nvidia-uvm dev/nvidia-uvm none bind,optional,create=file\n"
    "lxc.mount.entry: /dev/nvidia-uvm-tools dev/nvidia-uvm-tools none bind,optional,create=file\n"
    "lxc.mount.entry: /dev/nvidia-caps dev/nvidia-caps none bind,optional,create=dir\n";

TEST_F(ProvisionContainerTest, StepsRunInsideTheContainerThroughPctExec) {
  dir().WriteFile("root/etc/pve/lxc/200.conf", kFullPassthroughConf);
  Installed("cuda-keyring", "1.1-1");
  ProvisionOptions options;
  options.container = "200";
  options.steps = {"driver", "cuda"};
  auto result = Provision(options);
  ASSERT_TRUE(result.ok());
  ASSERT_TRUE(result->ok) << result->failed_step << ": " << LastReport(*result, result->failed_step)->detail;
  EXPECT_EQ(LastReport(*result, "passthrough")->phase, StepPhase::kSkipped);
  std::vector<std::string> calls = PctCalls();
  EXPECT_TRUE(Contains(calls, "exec 200 -- env DEBIAN_FRONTEND=noninteractive apt-get install -y "
                              "--no-install-recommends nvidia-driver-pinning-590.44.01"));
  EXPECT_TRUE(Contains(calls, "exec 200 -- env DEBIAN_FRONTEND=noninteractive apt-get install -y "
                              "--no-install-recommends nvidia-driver-cuda"));
  EXPECT_TRUE(Contains(calls, "exec 200 -- env DEBIAN_FRONTEND=noninteractive apt-get install -y cuda-toolkit-13-1"));
  // The profile file lands in the container's root filesystem, not the host's.
  std::ifstream profile(dir().path() + "/lxc/200/rootfs/etc/profile.d/gpuctl-cuda.sh");
  EXPECT_TRUE(profile.good());
  std::ifstream host_profile(config.system_root + "/etc/profile.d/gpuctl-cuda.sh");
  EXPECT_FALSE(host_profile.good());
}

// The container's root user controls its apt sources: links planted there
// (a file, or the sources.list.d directory) never lead the host agent to a
// host file; a regular file inside is read.
TEST_F(ProvisionContainerTest, TheContainersAptSourcesAreReadInsideItsRootOnly) {
  dir().WriteFile("root/etc/pve/lxc/200.conf", kFullPassthroughConf);
  sys::AddConfinedRoot(config.lxc_rootfs_template);
  Installed("cuda-keyring", "1.1-1");
  dir().WriteFile("host-secret.list", "deb http://host-only.invalid/debian bookworm main\n");
  dir().WriteFile("host-dir/x.list", "deb http://host-dir.invalid/debian bookworm main\n");
  dir().MakeDir("lxc/200/rootfs/etc/apt");
  ASSERT_EQ(::symlink((dir().path() + "/host-secret.list").c_str(),
                      (dir().path() + "/lxc/200/rootfs/etc/apt/sources.list").c_str()), 0);
  ASSERT_EQ(::symlink((dir().path() + "/host-dir").c_str(),
                      (dir().path() + "/lxc/200/rootfs/etc/apt/sources.list.d").c_str()), 0);
  ProvisionOptions options;
  options.container = "200";
  options.steps = {"driver"};
  options.dry_run = true;
  facts.kernel_module_version = "590.44.01";
  auto planned = [&] {
    auto result = Provision(options);
    EXPECT_TRUE(result.ok());
    std::string commands;
    for (const StepReport& r : reports) {
      for (const auto& c : r.commands) {
        for (const auto& a : c.argv) commands += a + " ";
      }
    }
    return commands;
  };
  EXPECT_THAT(planned(), ::testing::Not(HasSubstr("gpuctl-contrib.list"))) << "a host file was read as the container's";

  // A regular file inside: its entries get contrib.
  ASSERT_EQ(::unlink((dir().path() + "/lxc/200/rootfs/etc/apt/sources.list").c_str()), 0);
  dir().WriteFile("lxc/200/rootfs/etc/apt/sources.list", "deb http://inside.invalid/debian bookworm main\n");
  EXPECT_THAT(planned(), HasSubstr("gpuctl-contrib.list"));
}

}  // namespace
}  // namespace gpuctl::provision
