#include "daemon/config/daemon_config.h"

#include <gtest/gtest.h>

#include "tests/fakes/temp_dir.h"

namespace gpuctl::daemon {
namespace {

TEST(ParseListenAddress, UnixAndLoopbackTcp) {
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

TEST(ParseListenAddress, RefusesNonLoopbackAndGarbage) {
  for (const char* bad : {"0.0.0.0:50051", "10.0.0.1:1", "[::]:1", "example.com:80", "unix:rel.sock",
                          "unix:", "127.0.0.1", "127.0.0.1:", "127.0.0.1:99999", "127.0.0.1:http", ":50051"}) {
    auto r = ParseListenAddress(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument) << bad;
    }
  }
  EXPECT_NE(ParseListenAddress("0.0.0.0:1").status().message().find("loopback"), std::string::npos);
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
  dir.WriteFile("ok.json", R"({"listen": ["unix:/tmp/a.sock", "127.0.0.1:9"], "state_dir": "/srv/g", "log_level": "debug"})");
  DaemonConfig config;
  ASSERT_TRUE(LoadConfigFile(dir.path() + "/ok.json", config).ok());
  EXPECT_EQ(config.listen.size(), 2u);
  EXPECT_EQ(config.state_dir, "/srv/g");
  EXPECT_EQ(config.log_level, "debug");

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

}  // namespace
}  // namespace gpuctl::daemon
