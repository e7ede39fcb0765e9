// No open door: TCP only with mutual TLS (a CA made here with OpenSSL), a
// socket directory others cannot change, lock files that are never followed
// through a link, and a non-root user on this host who cannot start a job
// through any of them.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <grpcpp/grpcpp.h>
#include <nlohmann/json.hpp>

#include "gpuctl/v1/agent.grpc.pb.h"
#include "tests/integration/agent_fixture.h"
#include "tests/fakes/skip_policy.h"

namespace gpuctl::testing {
namespace {

using json = nlohmann::json;

// A CA and the certificates it signs, made with the openssl tool.
class TestCa {
 public:
  TestCa(const TempDir& dir, const std::string& name) : base_(dir.path() + "/" + name) {
    Run({"openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-keyout", base_ + "-ca.key", "-out", base_ + "-ca.pem", "-subj", "/CN=" + name + " test CA", "-days", "2"});
  }
  std::string ca() const { return base_ + "-ca.pem"; }
  // Returns the prefix: PREFIX.pem and PREFIX.key.
  std::string Issue(const std::string& name, const std::string& alt_names) const {
    std::string p = base_ + "-" + name;
    Run({"openssl", "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
         p + ".key", "-out", p + ".csr", "-subj", "/CN=" + name});
    std::ofstream(p + ".ext") << "subjectAltName=" << alt_names << "\n";
    Run({"openssl", "x509", "-req", "-in", p + ".csr", "-CA", ca(), "-CAkey", base_ + "-ca.key", "-CAcreateserial",
         "-out", p + ".pem", "-days", "2", "-extfile", p + ".ext"});
    return p;
  }

 private:
  static void Run(const std::vector<std::string>& argv) {
    RunResult r = RunProgram(argv);
    ASSERT_EQ(r.exit_code, 0) << argv[0] << " " << argv[1] << ": " << r.err;
  }
  std::string base_;
};

class AgentDoors : public AgentFixture {
 protected:
  void SetUp() override {
    if (RunProgram({"openssl", "version"}).exit_code != 0) GPUCTL_SKIP() << "no openssl tool to make a test CA";
  }
  // The agent on its unix socket and on TLS TCP; address_ stays the socket
  // so the fixture's readiness check needs no certificates.
  void StartTlsAgent(const TestCa& server_ca, const std::string& client_ca) {
    server_ = server_ca.Issue("agent", "IP:127.0.0.1,DNS:localhost");
    tcp_ = "127.0.0.1:" + std::to_string(FreeLoopbackPort());
    StartAgent({"--listen", UnixAddress(), "--listen", tcp_, "--tls-cert", server_ + ".pem", "--tls-key",
                server_ + ".key", "--tls-client-ca", client_ca});
  }
  RunResult GpuctlTcp(const std::string& ca, const std::string& client, std::vector<std::string> args) {
    std::vector<std::string> argv = {BinaryPath("gpuctl"), "--agent", tcp_};
    if (!ca.empty()) argv.insert(argv.end(), {"--tls-ca", ca});
    if (!client.empty()) argv.insert(argv.end(), {"--tls-cert", client + ".pem", "--tls-key", client + ".key"});
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProgram(argv);
  }
  std::string server_, tcp_;
};

TEST_F(AgentDoors, TcpWithoutMutualTlsIsRefusedAtStart) {
  for (const char* listen : {"127.0.0.1:0", "0.0.0.0:0", "localhost:0", "[::1]:0"}) {
    RunResult r = RunProgram({BinaryPath("gpuctld"), "--listen", listen, "--state-dir", StateDir()});
    EXPECT_EQ(r.exit_code, 2) << listen;
    EXPECT_NE(r.err.find("mutual TLS"), std::string::npos) << listen << ": " << r.err;
  }
}

TEST_F(AgentDoors, ClientWithTheRightCertificateIsServed) {
  TestCa ca(dir_, "one");
  StartTlsAgent(ca, ca.ca());
  std::string client = ca.Issue("client", "DNS:client");
  RunResult r = GpuctlTcp(ca.ca(), client, {"-o", "json", "health"});
  ASSERT_EQ(r.exit_code, 0) << r.err << AgentLog();
  EXPECT_GT(json::parse(r.out)["host"]["mem_total_bytes"].get<uint64_t>(), 0u);
  // The same through $GPUCTL_TLS_*, with the flags after the subcommand.
  r = RunProgram({BinaryPath("gpuctl"), "health", "--agent", tcp_},
                 {{"GPUCTL_TLS_CA", ca.ca()}, {"GPUCTL_TLS_CERT", client + ".pem"}, {"GPUCTL_TLS_KEY", client + ".key"}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST_F(AgentDoors, ClientWithoutACertificateIsRefused) {
  TestCa ca(dir_, "one");
  StartTlsAgent(ca, ca.ca());
  // gpuctl itself will not dial TCP without the three files.
  RunResult r = GpuctlTcp("", "", {"health"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--tls-ca"), std::string::npos) << r.err;
  // A client that trusts the agent but has no certificate of its own.
  std::ifstream ca_file(ca.ca());
  std::string ca_pem((std::istreambuf_iterator<char>(ca_file)), {});
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = ca_pem;
  auto stub = v1::Agent::NewStub(grpc::CreateChannel(tcp_, grpc::SslCredentials(options)));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  v1::HealthSnapshot snapshot;
  grpc::Status status = stub->GetHealth(&context, v1::GetHealthRequest(), &snapshot);
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
}

TEST_F(AgentDoors, CertificatesOfAnotherCaAreRefusedBothWays) {
  TestCa ca(dir_, "one");
  TestCa other(dir_, "other");
  StartTlsAgent(ca, ca.ca());
  std::string stranger = other.Issue("stranger", "DNS:stranger");
  RunResult r = GpuctlTcp(ca.ca(), stranger, {"health"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  // The client does not trust an agent whose certificate its CA did not sign.
  std::string client = ca.Issue("client", "DNS:client");
  r = GpuctlTcp(other.ca(), client, {"health"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("TLS"), std::string::npos) << r.err;
}

TEST_F(AgentDoors, SocketDirectoryOthersCanWriteIsRefused) {
  std::string run = std::filesystem::path(SocketPath()).parent_path();
  std::filesystem::create_directories(run);
  ::chmod(run.c_str(), 0777);
  RunResult r = RunProgram({BinaryPath("gpuctld"), "--listen", UnixAddress(), "--state-dir", StateDir(), "--guard",
                            "off", "--no-lock-memory"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("others may write"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(SocketPath()));
}

TEST_F(AgentDoors, LockFileLinkIsNeverFollowed) {
  std::string run = std::filesystem::path(SocketPath()).parent_path();
  std::filesystem::create_directories(run);
  ::chmod(run.c_str(), 0700);
  dir_.WriteFile("precious", "do not truncate\n");
  std::filesystem::create_symlink(dir_.path() + "/precious", SocketPath() + ".lock");
  RunResult r = RunProgram({BinaryPath("gpuctld"), "--listen", UnixAddress(), "--state-dir", StateDir(), "--guard",
                            "off", "--no-lock-memory"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("symbolic link"), std::string::npos) << r.err;
  std::ifstream precious(dir_.path() + "/precious");
  std::string text((std::istreambuf_iterator<char>(precious)), {});
  EXPECT_EQ(text, "do not truncate\n");
}

// Needs root: a real second user (nobody) on the same host.
TEST_F(AgentDoors, NonRootUserCannotStartAJobThroughAnyDoor) {
  if (::geteuid() != 0) GPUCTL_SKIP() << "needs root to run gpuctl as another user";
  if (RunProgram({"setpriv", "--version"}).exit_code != 0) GPUCTL_SKIP() << "no setpriv (util-linux)";
  TestCa ca(dir_, "one");
  StartTlsAgent(ca, ca.ca());
  std::string client = ca.Issue("client", "DNS:client");
  // The files a root client uses are root's: mode 0600 keys in a 0700 dir.
  ::chmod(dir_.path().c_str(), 0755);
  ::chmod((client + ".key").c_str(), 0600);
  std::vector<std::string> as_nobody = {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                        BinaryPath("gpuctl")};
  std::vector<std::vector<std::string>> doors = {
      {"--agent", UnixAddress()},
      {"--agent", tcp_},
      {"--agent", tcp_, "--tls-ca", ca.ca(), "--tls-cert", client + ".pem", "--tls-key", client + ".key"},
  };
  for (const auto& door : doors) {
    std::vector<std::string> argv = as_nobody;
    argv.insert(argv.end(), door.begin(), door.end());
    argv.insert(argv.end(), {"train", "start", "--name", "as-nobody", "--", "sh", "-c", "id"});
    RunResult r = RunProgram(argv);
    EXPECT_NE(r.exit_code, 0) << door[1] << ": " << r.out;
  }
  RunResult list = Gpuctl({"-o", "json", "train", "list"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(list.out.find("as-nobody"), std::string::npos) << list.out;
}

}  // namespace
}  // namespace gpuctl::testing
