// SshSession against a real sshd: the host key policy, authentication,
// Exec and Upload.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <gtest/gtest.h>

#include "client/ssh/ssh_session.h"
#include "tests/fakes/scoped_env.h"
#include "tests/integration/sshd_fixture.h"
#include "tests/fakes/temp_dir.h"

namespace gpuctl::testing {
namespace {

using client::ssh::SshOptions;
using client::ssh::SshSession;
using client::ssh::SshTarget;

using gpuctl::testing::ReadText;

class SshSessionTest : public SshdFixture {
 protected:
  SshTarget Target() const { return {.user = "root", .host = "127.0.0.1", .port = port_, .identity_file = UserKey()}; }
  SshOptions Options(bool accept_new = false) const {
    SshOptions options;
    options.ssh_dir = SshDir();
    options.global_known_hosts_file = dir_.path() + "/no_global_known_hosts";
    options.accept_new_host_key = accept_new;
    return options;
  }
  std::unique_ptr<SshSession> ConnectAccepting() {
    auto session = SshSession::Connect(Target(), Options(true));
    EXPECT_TRUE(session.ok()) << session.status().ToString() << "\n" << SshdLog();
    return session.ok() ? std::move(*session) : nullptr;
  }
  // No real ssh-agent may answer for the test's keys.
  ScopedEnv no_agent_{"SSH_AUTH_SOCK", std::nullopt};
};

TEST_F(SshSessionTest, UnknownHostKeyIsRefusedWithItsFingerprint) {
  auto session = SshSession::Connect(Target(), Options());
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.status().code(), ErrorCode::kPermissionDenied);
  EXPECT_NE(session.status().message().find("not known"), std::string::npos) << session.status().message();
  std::string fingerprint = HostKeyFingerprint("host_key");
  ASSERT_FALSE(fingerprint.empty());
  EXPECT_NE(session.status().message().find(fingerprint), std::string::npos) << session.status().message();
  EXPECT_NE(session.status().message().find("--accept-new-host-key"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(KnownHosts()));
}

TEST_F(SshSessionTest, AcceptedHostKeyIsRecordedAndThenKnown) {
  ASSERT_NE(ConnectAccepting(), nullptr);
  std::string known = ReadText(KnownHosts());
  EXPECT_NE(known.find("[127.0.0.1]:" + std::to_string(port_)), std::string::npos) << known;
  // Known now: no flag needed.
  auto again = SshSession::Connect(Target(), Options());
  EXPECT_TRUE(again.ok()) << again.status().ToString();
}

TEST_F(SshSessionTest, ChangedHostKeyIsRefusedEvenWhenAcceptingNewKeys) {
  ASSERT_NE(ConnectAccepting(), nullptr);
  ASSERT_NO_FATAL_FAILURE(StartSshd("other_host_key"));
  std::string before = ReadText(KnownHosts());
  auto session = SshSession::Connect(Target(), Options(true));
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.status().code(), ErrorCode::kPermissionDenied);
  const std::string& message = session.status().message();
  EXPECT_NE(message.find("REMOTE HOST KEY CHANGED"), std::string::npos) << message;
  EXPECT_NE(message.find("man-in-the-middle"), std::string::npos) << message;
  EXPECT_NE(message.find("ssh-keygen -R"), std::string::npos) << message;
  EXPECT_NE(message.find(HostKeyFingerprint("other_host_key")), std::string::npos) << message;
  EXPECT_EQ(ReadText(KnownHosts()), before) << "a changed key must never be recorded";
}

TEST_F(SshSessionTest, WrongUserKeyIsRefusedWithoutPasswordFallback) {
  std::string stranger = dir_.path() + "/stranger_key";
  ASSERT_EQ(RunProgram({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", stranger}).exit_code, 0);
  SshTarget target = Target();
  target.identity_file = stranger;
  auto session = SshSession::Connect(target, Options(true));
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.status().code(), ErrorCode::kPermissionDenied);
  EXPECT_NE(session.status().message().find("authentication"), std::string::npos) << session.status().message();
}

// The first way in is the user's ssh-agent: no identity file is named and
// ~/.ssh holds no key, so only the agent can answer.
TEST_F(SshSessionTest, SshAgentAuthenticatesWithoutAnyKeyFile) {
  std::string agent_socket = dir_.path() + "/agent.sock";
  BackgroundProcess agent({"ssh-agent", "-D", "-a", agent_socket}, dir_.path() + "/ssh-agent.log");
  ASSERT_TRUE(WaitUntil([&] { return std::filesystem::exists(agent_socket); }, std::chrono::seconds(5)));
  RunResult added = RunProgram({"ssh-add", UserKey()}, {{"SSH_AUTH_SOCK", agent_socket}});
  ASSERT_EQ(added.exit_code, 0) << added.err;

  SshTarget target = Target();
  target.identity_file.clear();
  {
    ScopedEnv with_agent("SSH_AUTH_SOCK", agent_socket);
    auto session = SshSession::Connect(target, Options(true));
    ASSERT_TRUE(session.ok()) << session.status().ToString() << "\n" << SshdLog();
    auto result = (*session)->Exec("echo via-agent");
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    EXPECT_EQ(result->out, "via-agent\n");
  }
  // The same connection without the agent has nothing to offer.
  auto refused = SshSession::Connect(target, Options(true));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), ErrorCode::kPermissionDenied) << refused.status().ToString();
}

TEST_F(SshSessionTest, ClosedPortIsUnavailable) {
  SshTarget target = Target();
  target.port = FreeLoopbackPort();
  auto session = SshSession::Connect(target, Options(true));
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.status().code(), ErrorCode::kUnavailable) << session.status().ToString();
}

TEST_F(SshSessionTest, SshConfigHostAliasIsFollowed) {
  std::ofstream(SshDir() + "/config") << "Host testnode\n  HostName 127.0.0.1\n  Port " << port_
                                      << "\n  User root\n  IdentityFile " << UserKey() << "\n";
  SshTarget alias;
  alias.host = "testnode";
  auto session = SshSession::Connect(alias, Options(true));
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  EXPECT_EQ((*session)->description(), "root@127.0.0.1:" + std::to_string(port_));
}

TEST_F(SshSessionTest, ExecReturnsOutputErrorsAndExitStatus) {
  auto session = ConnectAccepting();
  ASSERT_NE(session, nullptr);
  auto result = session->Exec("cat; echo oops >&2; exit 3", "hello over ssh\n");
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->out, "hello over ssh\n");
  EXPECT_EQ(result->err, "oops\n");
  EXPECT_EQ(result->exit_status, 3);
  // Large output in both streams at once must not stall.
  auto big = session->Exec("head -c 3000000 /dev/zero | tr '\\0' a; head -c 500000 /dev/zero | tr '\\0' b >&2");
  ASSERT_TRUE(big.ok()) << big.status().ToString();
  EXPECT_EQ(big->out.size(), 3000000u);
  EXPECT_EQ(big->err.size(), 500000u);
  EXPECT_EQ(big->exit_status, 0);
}

TEST_F(SshSessionTest, UploadReplacesAtomicallyWithTheGivenMode) {
  auto session = ConnectAccepting();
  ASSERT_NE(session, nullptr);
  std::mt19937 random(42);
  std::string content(3 * 1024 * 1024 + 17, '\0');
  for (char& c : content) c = static_cast<char>(random() & 0xff);
  dir_.MakeDir("remote");
  std::string target = dir_.path() + "/remote/gpuctld";
  dir_.WriteFile("remote/gpuctld", "old binary");
  ASSERT_TRUE(session->UploadBytes(content, target, 0750).ok());
  EXPECT_EQ(ReadText(target), content);
  struct stat st{};
  ASSERT_EQ(::stat(target.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0750u);
  EXPECT_FALSE(std::filesystem::exists(target + ".gpuctl-upload"));

  dir_.WriteFile("local.json", "{\"a\": 1}\n");
  ASSERT_TRUE(session->UploadFile(dir_.path() + "/local.json", target, 0644).ok());
  EXPECT_EQ(ReadText(target), "{\"a\": 1}\n");
  Status missing_dir = session->UploadBytes("x", dir_.path() + "/no/such/dir/file", 0644);
  EXPECT_EQ(missing_dir.code(), ErrorCode::kIo) << missing_dir.ToString();
}

}  // namespace
}  // namespace gpuctl::testing
