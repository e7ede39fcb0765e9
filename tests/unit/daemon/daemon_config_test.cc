#include "daemon/config/daemon_config.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/fakes/temp_dir.h"

namespace gpuctl::daemon {
namespace {

TEST(ParseListenAddress, UnixAndTcp) {
  auto unix_addr = ParseListenAddress("unix:/run/gpuctl/gpuctld.sock");
  ASSERT_TRUE(unix_addr.ok());
  EXPECT_EQ(unix_addr->kind, ListenAddress::Kind::kUnix);
  EXPECT_EQ(unix_addr->path, "/run/gpuctl/gpuctld.sock");
  EXPECT_EQ(unix_addr->GrpcUri(), "unix:/run/gpuctl/gpuctld.sock");

  auto v4 = ParseListenAddress("127.0.0.1:50051");
  ASSERT_TRUE(v4.ok());
  EXPECT_EQ(v4->host, "127.0.0.1");
  EXPECT_EQ(v4->port, 50051);
  EXPECT_TRUE(ParseListenAddress("127.8.9.10:1").ok());
  auto v6 = ParseListenAddress("[::1]:7000");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->GrpcUri(), "[::1]:7000");
  EXPECT_TRUE(ParseListenAddress("localhost:0").ok());
}

TEST(ParseListenAddress, AnyHostIsSyntaxOnlyAndGarbageIsRefused) {
  auto any = ParseListenAddress("0.0.0.0:50051");
  ASSERT_TRUE(any.ok());
  EXPECT_EQ(any->host, "0.0.0.0");
  EXPECT_TRUE(ParseListenAddress("[::]:1").ok());
  EXPECT_TRUE(ParseListenAddress("gpu1.example:80").ok());
  for (const char* bad : {"unix:rel.sock", "unix:", "127.0.0.1", "127.0.0.1:", "127.0.0.1:99999", "127.0.0.1:http",
                          ":50051", "[::1:5", "[]:5"}) {
    auto r = ParseListenAddress(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument) << bad;
    }
  }
}

TEST(Validate, TcpNeedsAllOfMutualTls) {
  DaemonConfig config;
  config.listen = {"unix:/run/x.sock", "127.0.0.1:50051"};
  Status s = Validate(config);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("mutual TLS"), std::string::npos) << s.message();
  config.tls_cert = "/etc/gpuctl/agent.pem";
  config.tls_key = "/etc/gpuctl/agent.key";
  EXPECT_FALSE(Validate(config).ok()) << "no client CA: clients would not be authenticated";
  config.tls_client_ca = "/etc/gpuctl/clients-ca.pem";
  EXPECT_TRUE(Validate(config).ok());
  config.tls_key = "agent.key";
  EXPECT_NE(Validate(config).message().find("--tls-key"), std::string::npos);
  // TLS files with only a unix socket: a mistake worth naming.
  config = DaemonConfig{};
  config.tls_cert = "/a";
  config.tls_key = "/b";
  config.tls_client_ca = "/c";
  EXPECT_NE(Validate(config).message().find("--listen HOST:PORT"), std::string::npos);
}

TEST(Validate, MetricsOnLoopbackArePlainAndElsewhereNeedMutualTls) {
  DaemonConfig config;
  for (const char* loopback : {"127.0.0.1:9400", "127.3.2.1:0", "[::1]:9400", "localhost:9400"}) {
    config.metrics_listen = loopback;
    EXPECT_TRUE(Validate(config).ok()) << loopback << ": " << Validate(config).message();
  }
  for (const char* open : {"0.0.0.0:9400", "10.0.0.5:9400", "[::]:9400", "gpu1.example:9400"}) {
    config.metrics_listen = open;
    Status s = Validate(config);
    EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << open;
    EXPECT_NE(s.message().find("only with mutual TLS"), std::string::npos) << s.message();
  }
  // The gRPC listener's TLS files serve /metrics too, with no TCP --listen.
  config.tls_cert = "/a";
  config.tls_key = "/b";
  config.tls_client_ca = "/c";
  EXPECT_TRUE(Validate(config).ok()) << Validate(config).message();
  for (const char* bad : {"unix:/run/m.sock", "9400", "host:", "host:99999"}) {
    config.metrics_listen = bad;
    EXPECT_NE(Validate(config).message().find("--metrics-listen"), std::string::npos) << bad;
  }
}

TEST(IsLoopbackHost, OnlyThisHostsAddresses) {
  EXPECT_TRUE(IsLoopbackHost("127.0.0.1"));
  EXPECT_TRUE(IsLoopbackHost("127.255.0.9"));
  EXPECT_TRUE(IsLoopbackHost("::1"));
  EXPECT_TRUE(IsLoopbackHost("localhost"));
  EXPECT_FALSE(IsLoopbackHost("128.0.0.1"));
  EXPECT_FALSE(IsLoopbackHost("0.0.0.0"));
  EXPECT_FALSE(IsLoopbackHost("::"));
  EXPECT_FALSE(IsLoopbackHost("127.0.0.1.example"));
  EXPECT_FALSE(IsLoopbackHost(""));
}

TEST(Validate, DefaultsAreValidAndBadFieldsNamed) {
  DaemonConfig config;
  EXPECT_TRUE(Validate(config).ok());
  config.state_dir = "relative/dir";
  EXPECT_NE(Validate(config).message().find("--state-dir"), std::string::npos);
  config = DaemonConfig{};
  config.log_level = "loud";
  EXPECT_NE(Validate(config).message().find("--log-level"), std::string::npos);
  config = DaemonConfig{};
  config.listen.clear();
  EXPECT_FALSE(Validate(config).ok());
}

TEST(LoadConfigFile, ReadsKnownKeysAndRefusesUnknown) {
  testing::TempDir dir;
  dir.WriteFile("ok.json", R"({"listen": ["unix:/tmp/a.sock", "127.0.0.1:9"], "state_dir": "/srv/g", "log_level": "debug",
                              "tls_cert": "/c.pem", "tls_key": "/k.pem", "tls_client_ca": "/ca.pem"})");
  DaemonConfig config;
  ASSERT_TRUE(LoadConfigFile(dir.path() + "/ok.json", config).ok());
  EXPECT_EQ(config.listen.size(), 2u);
  EXPECT_EQ(config.state_dir, "/srv/g");
  EXPECT_EQ(config.log_level, "debug");
  EXPECT_EQ(config.tls_client_ca, "/ca.pem");
  EXPECT_TRUE(Validate(config).ok());

  dir.WriteFile("typo.json", R"({"state_dri": "/x"})");
  Status s = LoadConfigFile(dir.path() + "/typo.json", config);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("state_dri"), std::string::npos);

  dir.WriteFile("bad.json", "{not json");
  EXPECT_FALSE(LoadConfigFile(dir.path() + "/bad.json", config).ok());
  dir.WriteFile("type.json", R"({"listen": "unix:/x"})");
  EXPECT_FALSE(LoadConfigFile(dir.path() + "/type.json", config).ok());
  EXPECT_EQ(LoadConfigFile(dir.path() + "/missing.json", config).code(), ErrorCode::kNotFound);
}

// A value of the wrong type names its key, the type it needs and what it was.
TEST(LoadConfigFile, AWrongTypeNamesTheKeyAndTheTypeItNeeds) {
  testing::TempDir dir;
  DaemonConfig config;
  const std::vector<std::pair<std::string, std::string>> rows = {
      {R"({"listen": "unix:/x"})", "key 'listen' must be an array of strings, got a string (\"unix:/x\")"},
      {R"({"listen": ["unix:/x", 5]})", "key 'listen' must be an array of strings, got an array (["},
      {R"({"gpu_max_age_ms": "500"})", "key 'gpu_max_age_ms' must be an integer, got a string (\"500\")"},
      {R"({"gpu_max_age_ms": 1.5})", "key 'gpu_max_age_ms' must be an integer, got a number (1.5)"},
      {R"({"max_log_streams": 99999999999})",
       "key 'max_log_streams' must be an integer from -2147483648 to 2147483647, got 99999999999"},
      {R"({"guard": "yes"})", "key 'guard' must be a boolean, got a string (\"yes\")"},
      {R"({"state_dir": null})", "key 'state_dir' must be a string, got null (null)"},
  };
  for (const auto& [text, expected] : rows) {
    SCOPED_TRACE(text);
    dir.WriteFile("c.json", text);
    Status s = LoadConfigFile(dir.path() + "/c.json", config);
    EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(s.message().find("config file " + dir.path() + "/c.json: " + expected), std::string::npos)
        << s.message();
  }
  dir.WriteFile("ok.json", R"({"guard": false, "gpu_max_age_ms": 250, "guard_protect": ["sshd"]})");
  ASSERT_TRUE(LoadConfigFile(dir.path() + "/ok.json", config).ok());
  EXPECT_FALSE(config.guard);
  EXPECT_EQ(config.gpu_max_age_ms, 250);
  EXPECT_EQ(config.guard_protect, std::vector<std::string>{"sshd"});
}

// The README's table of config keys lists every key the file takes, with
// its type: "| `state_dir` | string |".
TEST(ConfigFileKeys, TheReadmeListsEveryKeyWithItsType) {
  std::ifstream in(std::string(GPUCTL_SOURCE_DIR) + "/README.md");
  ASSERT_TRUE(in.good());
  std::stringstream readme;
  readme << in.rdbuf();
  ASSERT_GE(ConfigFileKeys().size(), 24u);
  for (const ConfigFileKey& key : ConfigFileKeys()) {
    const std::string row = "| `" + std::string(key.name) + "` | " + key.type + " |";
    EXPECT_NE(readme.str().find(row), std::string::npos) << "README.md lacks the row " << row;
  }
}

}  // namespace
}  // namespace gpuctl::daemon
