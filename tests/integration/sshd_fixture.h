// A real OpenSSH server on 127.0.0.1 for the SSH tests: host and user keys
// made with ssh-keygen in a temp dir, its own sshd_config, `sshd -D` on a
// free port. HOME and the client's ~/.ssh live in the temp dir too, so no
// test touches the real ~/.ssh or ~/.config. Skips when sshd is missing.
#pragma once

#include <map>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "tests/fakes/temp_dir.h"
#include "tests/integration/process_support.h"

namespace gpuctl::testing {

class SshdFixture : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // (Re)starts sshd with the host key `host_key_name` (made on first use),
  // on the same port as before.
  void StartSshd(const std::string& host_key_name = "host_key");
  void StopSshd();

  std::string Home() const { return dir_.path() + "/home"; }
  std::string SshDir() const { return Home() + "/.ssh"; }
  std::string KnownHosts() const { return SshDir() + "/known_hosts"; }
  std::string UserKey() const { return dir_.path() + "/user_key"; }
  std::string SshdLog() const;
  // "SHA256:..." of a host key, as ssh-keygen -l prints it.
  std::string HostKeyFingerprint(const std::string& host_key_name) const;
  // Environment for gpuctl: HOME and XDG_CONFIG_HOME in the temp dir, no ssh-agent.
  std::map<std::string, std::string> ClientEnv() const;

  TempDir dir_;
  int port_ = 0;
  std::unique_ptr<BackgroundProcess> sshd_;
};

}  // namespace gpuctl::testing
