// gpuctl --node and gpuctl node bootstrap against a real sshd on 127.0.0.1:
// this machine is bootstrapped as a node into a temporary prefix (no
// systemd), and its agent is reached through the SSH channel only.
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "client/ssh/sha256.h"
#include "tests/integration/sshd_fixture.h"
#include "tests/fakes/temp_dir.h"

namespace gpuctl::testing {
namespace {

using gpuctl::testing::ReadText;

// Exists and is no zombie: the detached agent's parent is whatever reaps
// orphans here, which in a container may never reap it.
bool Alive(pid_t pid) {
  if (pid <= 0 || ::kill(pid, 0) != 0) return false;
  std::string stat = ReadText("/proc/" + std::to_string(pid) + "/stat");
  size_t close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z';
}

class SshNodeTest : public SshdFixture {
 protected:
  void SetUp() override {
    SshdFixture::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    // No guard (it would make memory cgroups), no mlock, no GPUs.
    // A tmux server of its own, which TearDown ends: the agent sets it
    // exit-empty off, so it would outlive the test with its sessions.
    tmux_socket_ = "gpuctl-sshnode-" + std::filesystem::path(dir_.path()).filename().string();
    dir_.WriteFile("agent.json", "{\"guard\": false, \"lock_memory\": false, \"nvml_library\": \"" + dir_.path() +
                                     "/no-nvml.so\", \"nvidia_smi\": \"" + dir_.path() +
                                     "/no-nvidia-smi\", \"tmux_socket\": \"" + tmux_socket_ + "\"}\n");
    RunResult added = Gpuctl({"node", "add", "n1", "--host", "root@127.0.0.1:" + std::to_string(port_), "--identity",
                              UserKey()});
    ASSERT_EQ(added.exit_code, 0) << added.err;
  }
  void TearDown() override {
    StopBootstrappedAgent();
    if (!tmux_socket_.empty()) RunProgram({"tmux", "-L", tmux_socket_, "kill-server"}, {}, std::chrono::seconds(10));
    SshdFixture::TearDown();
  }
  std::string tmux_socket_;
  // The bootstrapped agent is detached from us: stop it by its pidfile.
  void StopBootstrappedAgent() const {
    std::string pid_text = ReadText(Prefix() + "/run/gpuctld.pid");
    pid_t pid = pid_text.empty() ? 0 : std::stoi(pid_text);
    if (Alive(pid)) {
      ::kill(pid, SIGTERM);
      if (!WaitUntil([&] { return !Alive(pid); }, std::chrono::seconds(10))) ::kill(pid, SIGKILL);
    }
  }

  std::string Prefix() const { return dir_.path() + "/prefix"; }
  RunResult Gpuctl(std::vector<std::string> args) const {
    args.insert(args.begin(), BinaryPath("gpuctl"));
    return RunProgram(args, ClientEnv(), std::chrono::seconds(60));
  }
  RunResult Bootstrap(bool accept_new = false) const {
    std::vector<std::string> args = {"-o", "json", "node", "bootstrap", "n1", "--prefix", Prefix(),
                                     "--agent-config", dir_.path() + "/agent.json"};
    if (accept_new) args.insert(args.begin(), "--accept-new-host-key");
    return Gpuctl(args);
  }
  int PidFromFile() const { return std::stoi(ReadText(Prefix() + "/run/gpuctld.pid")); }
  std::string LocalBuild() const {
    return client::ssh::Sha256Hex(ReadText(BinaryPath("gpuctld"))).substr(0, 12);
  }
};

TEST_F(SshNodeTest, UnknownHostKeyIsRefusedUntilAcceptedThenRecorded) {
  RunResult refused = Bootstrap();
  EXPECT_EQ(refused.exit_code, 6) << refused.err;  // host key not trusted: its own code
  EXPECT_NE(refused.err.find("is not known"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find(HostKeyFingerprint("host_key")), std::string::npos) << refused.err;
  EXPECT_FALSE(std::filesystem::exists(Prefix())) << "nothing may be installed on a refused host";
  EXPECT_FALSE(std::filesystem::exists(KnownHosts()));

  RunResult accepted = Bootstrap(/*accept_new=*/true);
  ASSERT_EQ(accepted.exit_code, 0) << accepted.err << "\n" << SshdLog();
  EXPECT_NE(ReadText(KnownHosts()).find("[127.0.0.1]:" + std::to_string(port_)), std::string::npos);
  // Recorded: the next connection needs no flag.
  RunResult health = Gpuctl({"--node", "n1", "health"});
  EXPECT_EQ(health.exit_code, 0) << health.err;
}

TEST_F(SshNodeTest, BootstrapStartsTheAgentAndHealthGoesThroughSsh) {
  RunResult first = Bootstrap(/*accept_new=*/true);
  ASSERT_EQ(first.exit_code, 0) << first.err << "\n" << ReadText(Prefix() + "/log/gpuctld.log");
  EXPECT_NE(first.err.find("uploading gpuctld ("), std::string::npos) << first.err;
  int pid = PidFromFile();
  EXPECT_TRUE(Alive(pid));
  EXPECT_NE(first.err.find("started gpuctld (pid " + std::to_string(pid) + ")"), std::string::npos) << first.err;
  EXPECT_NE(first.err.find("agent answers (build " + LocalBuild() + ")"), std::string::npos) << first.err;
  nlohmann::json summary = nlohmann::json::parse(first.out);
  EXPECT_EQ(summary["changed"], true);
  EXPECT_EQ(summary["pid"], pid);
  EXPECT_EQ(ReadText(Prefix() + "/bin/gpuctld"), ReadText(BinaryPath("gpuctld")));
  // The agent listens only on the prefix's unix socket.
  nlohmann::json config = nlohmann::json::parse(ReadText(Prefix() + "/etc/gpuctld.json"));
  EXPECT_EQ(config["listen"], nlohmann::json::array({"unix:" + Prefix() + "/run/gpuctld.sock"}));

  // No --agent: the node's agent, through the SSH channel.
  RunResult health = Gpuctl({"--node", "n1", "-o", "json", "health"});
  ASSERT_EQ(health.exit_code, 0) << health.err;
  nlohmann::json snapshot = nlohmann::json::parse(health.out);
  char hostname[256] = {};
  ::gethostname(hostname, sizeof hostname - 1);
  EXPECT_EQ(snapshot["host"]["hostname"], hostname) << health.out;
  EXPECT_TRUE(snapshot["gpus"].empty());
  // A stream through the tunnel, too.
  RunResult watched = Gpuctl({"--node", "n1", "-o", "json", "health", "--watch", "--interval", "100ms", "--count", "3"});
  ASSERT_EQ(watched.exit_code, 0) << watched.err;
  EXPECT_EQ(std::count(watched.out.begin(), watched.out.end(), '\n'), 3) << watched.out;

  // Nothing changed: a no-op that uploads and restarts nothing.
  RunResult second = Bootstrap();
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(second.err.find("uploading"), std::string::npos) << second.err;
  EXPECT_EQ(second.err.find("started"), std::string::npos) << second.err;
  EXPECT_NE(second.err.find("agent answers (build " + LocalBuild() + ", unchanged)"), std::string::npos)
      << second.err;
  EXPECT_EQ(nlohmann::json::parse(second.out)["changed"], false);
  EXPECT_EQ(PidFromFile(), pid);
  EXPECT_TRUE(Alive(pid));
}

TEST_F(SshNodeTest, AnAgentOfAnotherBuildIsReplaced) {
  ASSERT_EQ(Bootstrap(/*accept_new=*/true).exit_code, 0);
  int old_pid = PidFromFile();
  // Another build on the node: different bytes, put in place by rename
  // (the running agent keeps its old inode).
  std::string other = Prefix() + "/bin/gpuctld.other";
  std::filesystem::copy_file(BinaryPath("gpuctld"), other);
  std::ofstream(other, std::ios::app) << "another build";
  std::filesystem::rename(other, Prefix() + "/bin/gpuctld");

  RunResult replaced = Bootstrap();
  ASSERT_EQ(replaced.exit_code, 0) << replaced.err << "\n" << ReadText(Prefix() + "/log/gpuctld.log");
  EXPECT_NE(replaced.err.find("uploading gpuctld"), std::string::npos) << replaced.err;
  EXPECT_NE(replaced.err.find("stopping gpuctld (pid " + std::to_string(old_pid) + ")"), std::string::npos)
      << replaced.err;
  int new_pid = PidFromFile();
  EXPECT_NE(new_pid, old_pid);
  EXPECT_FALSE(Alive(old_pid));
  EXPECT_TRUE(Alive(new_pid));
  EXPECT_EQ(ReadText(Prefix() + "/bin/gpuctld"), ReadText(BinaryPath("gpuctld")));
  EXPECT_EQ(Gpuctl({"--node", "n1", "health"}).exit_code, 0);
}

TEST_F(SshNodeTest, ChangedHostKeyIsRefusedLoudlyEvenWithTheAcceptFlag) {
  ASSERT_EQ(Bootstrap(/*accept_new=*/true).exit_code, 0);
  ASSERT_NO_FATAL_FAILURE(StartSshd("other_host_key"));
  std::string known_before = ReadText(KnownHosts());
  for (bool accept_new : {false, true}) {
    std::vector<std::string> args = {"--node", "n1", "health"};
    if (accept_new) args.insert(args.begin(), "--accept-new-host-key");
    RunResult refused = Gpuctl(args);
    EXPECT_EQ(refused.exit_code, 6) << refused.err;
    EXPECT_NE(refused.err.find("REMOTE HOST KEY CHANGED"), std::string::npos) << refused.err;
    EXPECT_NE(refused.err.find("ssh-keygen -R '[127.0.0.1]:" + std::to_string(port_) + "'"), std::string::npos)
        << refused.err;
  }
  EXPECT_EQ(ReadText(KnownHosts()), known_before);
}

// Every hint after `--node N train start` reaches the job through N.
TEST_F(SshNodeTest, TrainStartHintsNameTheNode) {
  ASSERT_EQ(Bootstrap(/*accept_new=*/true).exit_code, 0);
  RunResult started = Gpuctl({"--node", "n1", "train", "start", "--name", "hinted", "--", "sleep", "30"});
  ASSERT_EQ(started.exit_code, 0) << started.err;
  for (const char* hint : {"gpuctl --node n1 train logs -f hinted", "gpuctl --node n1 train status hinted",
                           "gpuctl --node n1 train stop hinted", "gpuctl --node n1 train attach hinted"}) {
    EXPECT_NE(started.out.find(hint), std::string::npos) << hint << " in\n" << started.out;
  }
  EXPECT_EQ(started.out.find("tmux -L"), std::string::npos) << started.out;
  EXPECT_EQ(Gpuctl({"--node", "n1", "train", "stop", "hinted"}).exit_code, 0);
}

TEST_F(SshNodeTest, NodeWithoutAnAgentSaysHowToBootstrapIt) {
  ASSERT_EQ(Bootstrap(/*accept_new=*/true).exit_code, 0);
  StopBootstrappedAgent();
  RunResult health = Gpuctl({"--node", "n1", "health"});
  EXPECT_EQ(health.exit_code, 3) << health.err;
  EXPECT_NE(health.err.find("gpuctl node bootstrap n1"), std::string::npos) << health.err;

  RunResult unknown = Gpuctl({"--node", "nosuchnode", "health"});
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_NE(unknown.err.find("gpuctl node add nosuchnode"), std::string::npos) << unknown.err;

  RunResult both = Gpuctl({"--node", "n1", "--agent", "unix:/nonexistent.sock", "health"});
  EXPECT_EQ(both.exit_code, 2) << both.err;
}

// An agent that hangs (stopped here) is named by its node and the call's
// timeout, not by the client's temporary tunnel socket, where starting a
// gpuctld would mean nothing.
TEST_F(SshNodeTest, AHungAgentIsNamedByItsNodeNotByTheTunnelsSocket) {
  ASSERT_EQ(Bootstrap(/*accept_new=*/true).exit_code, 0);
  const int pid = PidFromFile();
  ASSERT_EQ(::kill(pid, SIGSTOP), 0);
  RunResult health = Gpuctl({"--node", "n1", "health"});
  ::kill(pid, SIGCONT);
  EXPECT_EQ(health.exit_code, 3) << health.err;
  EXPECT_NE(health.err.find("cannot reach gpuctld on node n1 through its SSH tunnel"), std::string::npos)
      << health.err;
  EXPECT_NE(health.err.find("gpuctl node bootstrap n1"), std::string::npos) << health.err;
  EXPECT_EQ(health.err.find("gpuctld --listen"), std::string::npos) << health.err;
}

TEST_F(SshNodeTest, GpuctlNodeEnvironmentVariableSelectsTheNode) {
  ASSERT_EQ(Bootstrap(/*accept_new=*/true).exit_code, 0);
  std::map<std::string, std::string> env = ClientEnv();
  env["GPUCTL_NODE"] = "n1";
  RunResult health = RunProgram({BinaryPath("gpuctl"), "-o", "json", "health"}, env);
  ASSERT_EQ(health.exit_code, 0) << health.err;
  EXPECT_TRUE(nlohmann::json::parse(health.out).contains("host"));
}

// `provision node NAME` reaches the node over SSH (bootstrapping is a no-op
// here) and streams the plan back. A dry run only reads: safe on this machine.
TEST_F(SshNodeTest, ProvisionNodeDryRunGoesThroughSsh) {
  ASSERT_EQ(Bootstrap(/*accept_new=*/true).exit_code, 0);
  int pid = PidFromFile();
  std::string venv = dir_.path() + "/no-venv-yet";
  RunResult plan = Gpuctl({"-o", "json", "provision", "node", "n1", "--dry-run", "--steps", "venv", "--venv", venv});
  ASSERT_EQ(plan.exit_code, 0) << plan.err << "\n" << plan.out;
  EXPECT_EQ(PidFromFile(), pid) << "the agent was already this build: no restart";
  EXPECT_FALSE(std::filesystem::exists(venv)) << "a dry run changes nothing";

  std::istringstream lines(plan.out);
  std::string line;
  bool planned_uv_venv = false;
  nlohmann::json summary;
  while (std::getline(lines, line)) {
    nlohmann::json event = nlohmann::json::parse(line);
    if (event.contains("summary")) summary = event["summary"];
    if (!event.contains("step") || event["step"]["step"] != "venv" || event["step"]["phase"] != "planned") continue;
    for (const auto& command : event["step"]["commands"]) {
      const auto& argv = command["argv"];
      if (argv.size() >= 3 && argv[0] == "uv" && argv[1] == "venv" && argv[2] == venv) planned_uv_venv = true;
    }
  }
  EXPECT_TRUE(planned_uv_venv) << plan.out;
  ASSERT_TRUE(summary.is_object()) << plan.out;
  EXPECT_EQ(summary["dry_run"], true);
  EXPECT_EQ(summary["ok"], true);
  // The run's state lives on the node, in the prefix's state dir.
  EXPECT_NE(summary["state_file"].get<std::string>().find(Prefix()), std::string::npos) << summary.dump();
}

}  // namespace
}  // namespace gpuctl::testing
