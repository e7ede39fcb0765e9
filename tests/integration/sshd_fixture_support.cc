#include "tests/integration/sshd_fixture.h"
#include "tests/fakes/skip_policy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace gpuctl::testing {
namespace {

constexpr const char* kSshd = "/usr/sbin/sshd";

bool PortAnswers(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

void MakeKey(const std::string& path) {
  if (std::filesystem::exists(path)) return;
  RunResult made = RunProgram({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "gpuctl-test", "-f", path});
  ASSERT_EQ(made.exit_code, 0) << made.err;
}

}  // namespace

void SshdFixture::SetUp() {
  if (!std::filesystem::exists(kSshd)) GPUCTL_SKIP() << kSshd << " is missing (apt-get install openssh-server)";
  // sshd refuses to start without its privilege separation directory.
  std::error_code ignored;
  std::filesystem::create_directories("/run/sshd", ignored);
  if (!std::filesystem::is_directory("/run/sshd")) GPUCTL_SKIP() << "/run/sshd is missing and cannot be made";
  ASSERT_NO_FATAL_FAILURE(MakeKey(UserKey()));
  std::filesystem::copy_file(UserKey() + ".pub", dir_.path() + "/authorized_keys");
  dir_.MakeDir("home/.ssh");
  ::chmod(SshDir().c_str(), 0700);
  ASSERT_NO_FATAL_FAILURE(StartSshd());
}

void SshdFixture::TearDown() { StopSshd(); }

void SshdFixture::StartSshd(const std::string& host_key_name) {
  StopSshd();
  std::string host_key = dir_.path() + "/" + host_key_name;
  ASSERT_NO_FATAL_FAILURE(MakeKey(host_key));
  // A restart keeps the port: known_hosts names hosts by [host]:port.
  if (port_ == 0) port_ = FreeLoopbackPort();
  std::string config = dir_.path() + "/sshd_config";
  std::ofstream(config) << "Port " << port_ << "\n"
                        << "ListenAddress 127.0.0.1\n"
                        << "HostKey " << host_key << "\n"
                        << "AuthorizedKeysFile " << dir_.path() << "/authorized_keys\n"
                        << "PidFile " << dir_.path() << "/sshd.pid\n"
                        << "StrictModes no\nUsePAM no\n"
                        // CI runs as root; keys only.
                        << "PermitRootLogin prohibit-password\n"
                        << "PasswordAuthentication no\nKbdInteractiveAuthentication no\n"
                        << "AllowStreamLocalForwarding yes\n"
                        << "Subsystem sftp internal-sftp\n"
                        << "LogLevel VERBOSE\n";
  sshd_ = std::make_unique<BackgroundProcess>(std::vector<std::string>{kSshd, "-D", "-e", "-f", config},
                                              dir_.path() + "/sshd.log");
  bool up = WaitUntil([&] { return PortAnswers(port_) || !sshd_->running(); }, std::chrono::seconds(10));
  ASSERT_TRUE(up && sshd_->running()) << "sshd did not start:\n" << SshdLog();
}

void SshdFixture::StopSshd() {
  if (!sshd_) return;
  sshd_->Signal(SIGTERM);
  sshd_->WaitForExit(std::chrono::seconds(5));
  sshd_.reset();
}

std::string SshdFixture::SshdLog() const {
  std::ifstream in(dir_.path() + "/sshd.log");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string SshdFixture::HostKeyFingerprint(const std::string& host_key_name) const {
  RunResult listed = RunProgram({"ssh-keygen", "-l", "-E", "sha256", "-f", dir_.path() + "/" + host_key_name + ".pub"});
  // "256 SHA256:abc... comment (ED25519)"
  std::istringstream words(listed.out);
  std::string bits, fingerprint;
  words >> bits >> fingerprint;
  return fingerprint;
}

std::map<std::string, std::string> SshdFixture::ClientEnv() const {
  return {{"HOME", Home()}, {"XDG_CONFIG_HOME", Home() + "/.config"}, {"SSH_AUTH_SOCK", ""}};
}

}  // namespace gpuctl::testing
