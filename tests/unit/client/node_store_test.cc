#include "client/node/node_store.h"

#include <sys/stat.h>

#include <fstream>

#include <gtest/gtest.h>

#include "tests/fakes/temp_dir.h"

namespace gpuctl::client {
namespace {

TEST(ParseNodeTarget, UserHostPort) {
  Result<Node> node = ParseNodeTarget("gpu1", "root@10.0.0.5:2222");
  ASSERT_TRUE(node.ok()) << node.status().message();
  EXPECT_EQ(node->user, "root");
  EXPECT_EQ(node->host, "10.0.0.5");
  EXPECT_EQ(node->port, 2222);
  EXPECT_EQ(FormatNodeTarget(*node), "root@10.0.0.5:2222");
}

TEST(ParseNodeTarget, HostAloneLeavesUserAndPortToSshConfig) {
  Result<Node> node = ParseNodeTarget("a", "gpu-box");
  ASSERT_TRUE(node.ok());
  EXPECT_EQ(node->user, "");
  EXPECT_EQ(node->host, "gpu-box");
  EXPECT_FALSE(node->port.has_value());
}

TEST(ParseNodeTarget, BracketedIpv6WithAndWithoutPort) {
  Result<Node> with_port = ParseNodeTarget("a", "me@[fe80::1]:2200");
  ASSERT_TRUE(with_port.ok());
  EXPECT_EQ(with_port->host, "fe80::1");
  EXPECT_EQ(with_port->port, 2200);
  EXPECT_EQ(FormatNodeTarget(*with_port), "me@[fe80::1]:2200");
  Result<Node> bare = ParseNodeTarget("a", "[::1]");
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->host, "::1");
  EXPECT_FALSE(bare->port.has_value());
}

TEST(ParseNodeTarget, UserMayContainAtSign) {
  Result<Node> node = ParseNodeTarget("a", "me@corp@host");  // the last '@' separates
  ASSERT_TRUE(node.ok());
  EXPECT_EQ(node->user, "me@corp");
  EXPECT_EQ(node->host, "host");
}

TEST(ParseNodeTarget, RefusesBadTargets) {
  for (const char* bad : {"", "root@", "@host", "host:", "host:0", "host:65536", "host:22x", "fe80::1", "[::1",
                          "[::1]x", "a b", "my user@host", "-oProxyCommand=x@host", "root@host;reboot",
                          "root@-host", "root@ho\nst"}) {
    EXPECT_FALSE(ParseNodeTarget("a", bad).ok()) << bad;
  }
}

TEST(ParseNodeTarget, AHostIsAtMostADnsNamesLength) {
  EXPECT_TRUE(ParseNodeTarget("a", "root@" + std::string(253, 'h')).ok());
  Result<Node> long_host = ParseNodeTarget("a", "root@" + std::string(3000, 'h'));
  ASSERT_FALSE(long_host.ok());
  EXPECT_NE(long_host.status().message().find("at most 253"), std::string::npos);
  EXPECT_LT(long_host.status().message().size(), 400u) << "the refusal does not repeat 3000 characters";
  EXPECT_TRUE(ParseNodeTarget("a", "DOMAIN\\me@host").ok());
  EXPECT_TRUE(ParseNodeTarget("a", "[fe80::1%eth0]:22").ok());
}

TEST(ValidateNodeName, AcceptsPlainNamesRefusesOthers) {
  EXPECT_TRUE(ValidateNodeName("gpu-1.lab_a").ok());
  for (const char* bad : {"", "-x", ".x", "a/b", "a b", "local", "all"}) {
    EXPECT_FALSE(ValidateNodeName(bad).ok()) << bad;
  }
  EXPECT_NE(ValidateNodeName("all").message().find("--nodes all means every node"), std::string::npos);
  EXPECT_FALSE(ValidateNodeName(std::string(65, 'a')).ok());
}

TEST(DefaultNodesPath, PrefersXdgConfigHome) {
  EXPECT_EQ(DefaultNodesPath("/x", "/home/u"), "/x/gpuctl/nodes.json");
  EXPECT_EQ(DefaultNodesPath("", "/home/u"), "/home/u/.config/gpuctl/nodes.json");
}

TEST(NodeStore, AddFindListRemoveRoundTrip) {
  testing::TempDir dir;
  NodeStore store(dir.path() + "/cfg/gpuctl/nodes.json");
  Result<std::vector<Node>> empty = store.List();
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());

  Node a = *ParseNodeTarget("a", "root@h1:22");
  a.identity_file = "/keys/id";
  a.container_vmid = 200;
  Node b = *ParseNodeTarget("b", "h2");
  ASSERT_TRUE(store.Add(a).ok());
  ASSERT_TRUE(store.Add(b).ok());

  // A second store on the same file sees what the first wrote.
  NodeStore again(store.path());
  Result<Node> found = again.Find("a");
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(*found, a);
  EXPECT_EQ(again.List()->size(), 2u);

  struct stat st {};
  ASSERT_EQ(stat(store.path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);  // it names keys and hosts

  ASSERT_TRUE(again.Remove("a").ok());
  EXPECT_EQ(store.Find("a").status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(store.Remove("a").code(), ErrorCode::kNotFound);
  EXPECT_EQ(*store.List(), std::vector<Node>{b});
}

TEST(NodeStore, DuplicateNeedsReplace) {
  testing::TempDir dir;
  NodeStore store(dir.path() + "/nodes.json");
  ASSERT_TRUE(store.Add(*ParseNodeTarget("a", "h1")).ok());
  Status again = store.Add(*ParseNodeTarget("a", "h2"));
  EXPECT_EQ(again.code(), ErrorCode::kAlreadyExists);
  EXPECT_EQ(store.Find("a")->host, "h1");
  ASSERT_TRUE(store.Add(*ParseNodeTarget("a", "h2"), /*replace=*/true).ok());
  EXPECT_EQ(store.Find("a")->host, "h2");
}

TEST(NodeStore, NotFoundSaysHowToAdd) {
  testing::TempDir dir;
  NodeStore store(dir.path() + "/nodes.json");
  Status s = store.Find("gpu9").status();
  EXPECT_EQ(s.code(), ErrorCode::kNotFound);
  EXPECT_NE(s.message().find("gpuctl node add gpu9"), std::string::npos) << s.message();
}

TEST(NodeStore, CorruptFileIsAnErrorNotAnEmptyList) {
  testing::TempDir dir;
  dir.WriteFile("nodes.json", "{ not json");
  NodeStore store(dir.path() + "/nodes.json");
  Result<std::vector<Node>> nodes = store.List();
  ASSERT_FALSE(nodes.ok());
  EXPECT_NE(nodes.status().message().find("nodes.json"), std::string::npos);
  // And adding does not overwrite what the user may want to repair.
  EXPECT_FALSE(store.Add(*ParseNodeTarget("a", "h")).ok());
  std::ifstream in(store.path());
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "{ not json");
}

// The defect tests/fuzz/event_journal_fuzz found, here too: a port of 1e300
// in a hand-edited file was converted to int, which is undefined behaviour.
TEST(NodeStore, PortOrContainerThatIsNotAnIntIsAnErrorNamingTheFile) {
  for (const char* field : {R"("port": 1e300)", R"("port": 22.5)", R"("container": 4294967296)"}) {
    std::string text = std::string(R"({"nodes": [{"name": "a", "host": "h", )") + field + "}]}";
    Result<std::vector<Node>> nodes = ParseNodesFile(text, "/home/me/nodes.json");
    ASSERT_FALSE(nodes.ok()) << field;
    EXPECT_NE(nodes.status().message().find("/home/me/nodes.json"), std::string::npos) << nodes.status().message();
  }
}

TEST(NodeStore, FileTextRoundTrips) {
  std::vector<Node> nodes = {*ParseNodeTarget("a", "me@[fe80::1]:2200"), *ParseNodeTarget("b", "gpu-box")};
  nodes[1].container_vmid = 101;
  nodes[1].agent_prefix = "/opt/gpuctl";
  Result<std::vector<Node>> back = ParseNodesFile(FormatNodesFile(nodes), "nodes.json");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, nodes);
}

}  // namespace
}  // namespace gpuctl::client
