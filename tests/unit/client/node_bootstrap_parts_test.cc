// The pure parts of bootstrap: where an agent lives, the config it gets,
// reading the node's probe output, and quoting for the remote shell.
#include <regex>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "agents/sys/command_runner.h"
#include "agents/sys/files.h"
#include "client/node/agent_config.h"
#include "client/node/agent_layout.h"
#include "client/node/remote_agent_commands.h"
#include "client/ssh/sha256.h"
#include "client/ssh/shell_quote.h"
#include "tests/fakes/temp_dir.h"

namespace gpuctl::client {
namespace {

TEST(AgentLayoutTest, SystemInstallMatchesDeploy) {
  Result<AgentLayout> layout = AgentLayoutFor("");
  ASSERT_TRUE(layout.ok());
  EXPECT_TRUE(layout->system());
  EXPECT_EQ(layout->binary, "/usr/local/bin/gpuctld");
  EXPECT_EQ(layout->config, "/etc/gpuctl/gpuctld.json");
  EXPECT_EQ(layout->socket, "/run/gpuctl/gpuctld.sock");
}

TEST(AgentLayoutTest, PrefixHoldsEverything) {
  Result<AgentLayout> layout = AgentLayoutFor("/opt/g/");
  ASSERT_TRUE(layout.ok());
  EXPECT_FALSE(layout->system());
  EXPECT_EQ(layout->binary, "/opt/g/bin/gpuctld");
  EXPECT_EQ(layout->socket, "/opt/g/run/gpuctld.sock");
  EXPECT_EQ(layout->state_dir, "/opt/g/state");
  EXPECT_EQ(AgentLayoutFor("relative").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(AgentLayoutFor("/a/../b").status().code(), ErrorCode::kInvalidArgument);
}

TEST(AgentConfigTest, UnixSocketIsTheLayoutsAndTcpIsKept) {
  AgentLayout layout = *AgentLayoutFor("/p");
  Result<std::string> text =
      AgentConfigFor(R"({"listen": ["unix:/run/gpuctl/gpuctld.sock", "127.0.0.1:50051"], "guard": false})", layout);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  nlohmann::json config = nlohmann::json::parse(*text);
  EXPECT_EQ(config["listen"], nlohmann::json::array({"unix:/p/run/gpuctld.sock", "127.0.0.1:50051"}));
  EXPECT_EQ(config["state_dir"], "/p/state");
  EXPECT_EQ(config["guard"], false);
  // Its own tmux server, stable for the prefix and not another prefix's.
  EXPECT_EQ(config["tmux_socket"], TmuxSocketForPrefix("/p"));
  EXPECT_NE(TmuxSocketForPrefix("/p"), TmuxSocketForPrefix("/q"));
  EXPECT_TRUE(std::regex_match(TmuxSocketForPrefix("/p"), std::regex("gpuctl-[0-9a-f]{8}")));
  nlohmann::json own = nlohmann::json::parse(*AgentConfigFor(R"({"tmux_socket": "mine"})", layout));
  EXPECT_EQ(own["tmux_socket"], "mine");
}

TEST(AgentConfigTest, SystemInstallKeepsItsStateDir) {
  nlohmann::json config =
      nlohmann::json::parse(*AgentConfigFor(R"({"state_dir": "/var/lib/gpuctl"})", *AgentLayoutFor("")));
  EXPECT_EQ(config["state_dir"], "/var/lib/gpuctl");
  EXPECT_FALSE(config.contains("tmux_socket"));  // the system agent's default, gpuctl
  EXPECT_EQ(config["listen"], nlohmann::json::array({"unix:/run/gpuctl/gpuctld.sock"}));
  EXPECT_EQ(AgentConfigFor("[1]", *AgentLayoutFor("")).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(AgentConfigFor("{", *AgentLayoutFor("")).status().code(), ErrorCode::kInvalidArgument);
}

constexpr const char* kNodeFacts =
    "machine x86_64\nglibc 2.36\nos Debian GNU/Linux 12 (bookworm)\ntmux none\npackages apt-get\nroot yes\n";

TEST(RemoteAgentStateTest, ParsesWhatTheProbePrints) {
  Result<RemoteAgentState> state = ParseRemoteAgentState(
      std::string("binary abc\nconfig none\nsystemd no\nrunning 4242\nactive no\nserving none\n") + kNodeFacts);
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  EXPECT_EQ(state->binary_sha256, "abc");
  EXPECT_EQ(state->config_sha256, "");
  EXPECT_FALSE(state->systemd);
  EXPECT_EQ(state->pid, 4242);
  EXPECT_TRUE(state->running());
  EXPECT_FALSE(state->serving_pid.has_value());
  EXPECT_EQ(state->machine, "x86_64");
  EXPECT_EQ(state->glibc, "2.36");
  EXPECT_EQ(state->os, "Debian GNU/Linux 12 (bookworm)");
  EXPECT_EQ(state->tmux, "");
  EXPECT_EQ(state->package_manager, "apt-get");
  EXPECT_TRUE(state->root);

  std::string sha(64, 'f');
  state = ParseRemoteAgentState("binary none\nconfig def\nsystemd yes\nrunning none\nactive yes\nserving 77 " + sha +
                                "\nmachine aarch64\nglibc none\nos \ntmux /usr/bin/tmux\npackages none\nroot no\n");
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  EXPECT_EQ(state->binary_sha256, "");
  EXPECT_TRUE(state->systemd);
  EXPECT_FALSE(state->pid.has_value());
  EXPECT_TRUE(state->unit_active);
  EXPECT_EQ(state->serving_pid, 77);
  EXPECT_EQ(state->serving_sha256, sha);
  EXPECT_EQ(state->glibc, "");
  EXPECT_EQ(state->tmux, "/usr/bin/tmux");
  EXPECT_EQ(state->package_manager, "");
  EXPECT_FALSE(state->root);
}

TEST(RemoteAgentStateTest, RefusesAnythingElse) {
  std::string agent = "binary a\nconfig b\nsystemd no\nrunning 1\nactive no\nserving none\n";
  EXPECT_TRUE(ParseRemoteAgentState(agent + kNodeFacts).ok());
  EXPECT_FALSE(ParseRemoteAgentState("binary abc\n").ok());
  EXPECT_FALSE(ParseRemoteAgentState(agent).ok()) << "node facts missing";
  EXPECT_FALSE(ParseRemoteAgentState(agent + kNodeFacts + "motd hi\n").ok());
  EXPECT_FALSE(ParseRemoteAgentState(agent + kNodeFacts + "root no\n").ok()) << "a key twice";
  std::string bad_pid = "binary a\nconfig b\nsystemd no\nrunning 12x\nactive no\nserving none\n";
  EXPECT_FALSE(ParseRemoteAgentState(bad_pid + kNodeFacts).ok());
  std::string bad_serving = "binary a\nconfig b\nsystemd no\nrunning 1\nactive no\nserving 5 short\n";
  EXPECT_FALSE(ParseRemoteAgentState(bad_serving + kNodeFacts).ok());
}

TEST(RemoteCommandsTest, InstallsTmuxWithTheNodesPackageManager) {
  EXPECT_NE(InstallTmuxCommand("apt-get")->find("apt-get install -y"), std::string::npos);
  EXPECT_NE(InstallTmuxCommand("apt-get")->find("apt-get update"), std::string::npos);
  EXPECT_EQ(*InstallTmuxCommand("dnf"), "dnf install -y tmux");
  EXPECT_EQ(*InstallTmuxCommand("apk"), "apk add --no-cache tmux");
  EXPECT_EQ(InstallTmuxCommand("").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(InstallTmuxCommand("pacman; rm -rf /").status().code(), ErrorCode::kInvalidArgument);
}

TEST(RemoteCommandsTest, PathsAreQuoted) {
  AgentLayout layout = *AgentLayoutFor("/tmp/it's here");
  std::string start = StartDetachedCommand(layout);
  EXPECT_NE(start.find("'/tmp/it'\\''s here/bin/gpuctld'"), std::string::npos) << start;
  EXPECT_NE(ProbeCommand(layout).find("b='/tmp/it'\\''s here/bin/gpuctld'"), std::string::npos);
}

// A failed start shows only its own lines: the log's size before the start
// is the mark, and the tail starts there (run here by a real shell).
TEST(RemoteCommandsTest, TheLogTailIsThisStartsOnly) {
  testing::TempDir dir;
  AgentLayout layout = *AgentLayoutFor(dir.path() + "/p");
  dir.WriteFile("p/log/gpuctld.log", "");
  const std::string log = layout.log;
  ASSERT_TRUE(sys::WriteFileAtomic(log, "an earlier start: bad config\n").ok());
  auto run = [](const std::string& command) {
    sys::RunOptions options;
    options.timeout = std::chrono::seconds(10);
    Result<sys::CommandOutput> out = sys::MakeSubprocessRunner()->Run({"sh", "-c", command}, options);
    return out.ok() ? out->stdout_text : std::string("(did not run)");
  };
  const std::string mark_text = run(LogMarkCommand(layout, false));
  const uint64_t mark = std::stoull(mark_text);
  EXPECT_EQ(mark, 29u);  // the first line's bytes, its newline included
  ASSERT_TRUE(sys::WriteFileAtomic(log, "an earlier start: bad config\nthis start: port in use\n").ok());
  EXPECT_EQ(run(LogTailCommand(layout, false, mark)), "this start: port in use\n");
  EXPECT_EQ(run(LogTailCommand(layout, false, 0)), "an earlier start: bad config\nthis start: port in use\n");
  // No log yet: the mark is 0.
  EXPECT_EQ(run(LogMarkCommand(*AgentLayoutFor(dir.path() + "/none"), false)), "0\n");
  EXPECT_EQ(LogTailCommand(layout, true, 1700000000), "journalctl -u gpuctld --since @1700000000 -n 20 --no-pager 2>&1");
}

TEST(ShellQuoteTest, QuotesEveryByte) {
  EXPECT_EQ(ssh::ShellQuote("plain"), "'plain'");
  EXPECT_EQ(ssh::ShellQuote("a'b"), "'a'\\''b'");
  EXPECT_EQ(ssh::ShellQuote("$(rm -rf /)"), "'$(rm -rf /)'");
  EXPECT_EQ(ssh::ShellJoin({"ls", "-l", "a b"}), "'ls' '-l' 'a b'");
}

TEST(Sha256Test, MatchesSha256sum) {
  EXPECT_EQ(ssh::Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(ssh::Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace
}  // namespace gpuctl::client
