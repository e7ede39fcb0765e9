// The pure parts of bootstrap: where an agent lives, the config it gets,
// reading the node's probe output, and quoting for the remote shell.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "client/node/agent_config.h"
#include "client/node/agent_layout.h"
#include "client/node/remote_agent_commands.h"
#include "client/ssh/sha256.h"
#include "client/ssh/shell_quote.h"

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
}

TEST(AgentConfigTest, SystemInstallKeepsItsStateDir) {
  nlohmann::json config =
      nlohmann::json::parse(*AgentConfigFor(R"({"state_dir": "/var/lib/gpuctl"})", *AgentLayoutFor("")));
  EXPECT_EQ(config["state_dir"], "/var/lib/gpuctl");
  EXPECT_EQ(config["listen"], nlohmann::json::array({"unix:/run/gpuctl/gpuctld.sock"}));
  EXPECT_EQ(AgentConfigFor("[1]", *AgentLayoutFor("")).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(AgentConfigFor("{", *AgentLayoutFor("")).status().code(), ErrorCode::kInvalidArgument);
}

TEST(RemoteAgentStateTest, ParsesWhatTheProbePrints) {
  Result<RemoteAgentState> state =
      ParseRemoteAgentState("binary abc\nconfig none\nsystemd no\nrunning 4242\nactive no\n");
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  EXPECT_EQ(state->binary_sha256, "abc");
  EXPECT_EQ(state->config_sha256, "");
  EXPECT_FALSE(state->systemd);
  EXPECT_EQ(state->pid, 4242);
  EXPECT_TRUE(state->running());

  state = ParseRemoteAgentState("binary none\nconfig def\nsystemd yes\nrunning none\nactive yes\n");
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(state->binary_sha256, "");
  EXPECT_TRUE(state->systemd);
  EXPECT_FALSE(state->pid.has_value());
  EXPECT_TRUE(state->unit_active);
}

TEST(RemoteAgentStateTest, RefusesAnythingElse) {
  EXPECT_FALSE(ParseRemoteAgentState("binary abc\n").ok());
  EXPECT_FALSE(ParseRemoteAgentState("binary a\nconfig b\nsystemd no\nrunning 12x\nactive no\n").ok());
  EXPECT_FALSE(ParseRemoteAgentState("binary a\nconfig b\nsystemd no\nrunning 1\nactive no\nmotd hi\n").ok());
}

TEST(RemoteCommandsTest, PathsAreQuoted) {
  AgentLayout layout = *AgentLayoutFor("/tmp/it's here");
  std::string start = StartDetachedCommand(layout);
  EXPECT_NE(start.find("'/tmp/it'\\''s here/bin/gpuctld'"), std::string::npos) << start;
  EXPECT_NE(ProbeCommand(layout).find("b='/tmp/it'\\''s here/bin/gpuctld'"), std::string::npos);
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
