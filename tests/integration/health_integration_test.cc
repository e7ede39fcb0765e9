// The real gpuctld and gpuctl, end to end, over a unix socket and loopback TCP.
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/integration/agent_fixture.h"

namespace gpuctl::testing {
namespace {

using nlohmann::json;

uint64_t MeminfoKb(const std::string& key) {
  std::ifstream in("/proc/meminfo");
  std::string name;
  uint64_t value = 0;
  std::string unit;
  while (in >> name >> value) {
    if (name == key + ":") return value;
    std::getline(in, unit);
  }
  return 0;
}

class HealthIntegration : public AgentFixture {};

TEST_F(HealthIntegration, JsonOverUnixSocketMatchesProc) {
  // MemAvailable moves (other tests and compiles run beside this one): the
  // agent's figure must lie within 1 GiB of what /proc said between the
  // agent's start and the answer.
  const double first = static_cast<double>(MeminfoKb("MemAvailable") * 1024);
  StartAgent();
  RunResult r = Gpuctl({"-o", "json", "health"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const double last = static_cast<double>(MeminfoKb("MemAvailable") * 1024);
  json doc = json::parse(r.out);
  EXPECT_EQ(doc["host"]["mem_total_bytes"].get<uint64_t>(), MeminfoKb("MemTotal") * 1024);
  double avail = doc["host"]["mem_available_bytes"].get<double>();
  const double slack = 1024.0 * 1024 * 1024;
  EXPECT_GE(avail, std::min(first, last) - slack) << "first " << first << ", last " << last;
  EXPECT_LE(avail, std::max(first, last) + slack) << "first " << first << ", last " << last;
  EXPECT_EQ(doc["host"]["swap_total_bytes"].get<uint64_t>(), MeminfoKb("SwapTotal") * 1024);
  EXPECT_GE(doc["host"]["cpus"].get<int>(), 1);
  EXPECT_TRUE(doc["host"].contains("psi"));
  EXPECT_TRUE(doc["host"]["cgroup_version"].is_string());
  EXPECT_TRUE(doc["host"]["container"].is_string());
  // No driver here: a normal state with a reason, not an error.
  EXPECT_EQ(doc["gpu_source"], "none");
  EXPECT_TRUE(doc["gpus"].is_array());
  EXPECT_EQ(doc["gpus"].size(), 0u);
  EXPECT_FALSE(doc["gpu_error"].get<std::string>().empty());
}

TEST_F(HealthIntegration, SocketIsPrivate) {
  StartAgent();
  struct stat st {};
  ASSERT_EQ(stat(SocketPath().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(stat((dir_.path() + "/run").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

TEST_F(HealthIntegration, TextShowsHostLineAndNoGpus) {
  StartAgent();
  RunResult r = Gpuctl({"health"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("cpus"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no GPUs"), std::string::npos) << r.out;
}

TEST_F(HealthIntegration, WatchStreamsAtTheInterval) {
  StartAgent();
  auto start = std::chrono::steady_clock::now();
  RunResult r = Gpuctl({"-o", "json", "health", "--watch", "--interval", "100ms", "--count", "4"});
  auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(r.out);
  std::string line;
  std::vector<int64_t> stamps;
  while (std::getline(lines, line)) stamps.push_back(json::parse(line)["sampled_at_unix_ms"].get<int64_t>());
  ASSERT_EQ(stamps.size(), 4u);
  for (size_t i = 1; i < stamps.size(); ++i) EXPECT_GT(stamps[i], stamps[i - 1]);
  // Four snapshots 100 ms apart take at least 300 ms: the interval is honoured.
  EXPECT_GE(std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count(), 290);
}

TEST_F(HealthIntegration, SecondInstanceOnSameSocketRefusesAndFirstKeepsServing) {
  StartAgent();
  RunResult second = RunProgram({BinaryPath("gpuctld"), "--listen", UnixAddress(), "--state-dir", StateDir()});
  EXPECT_NE(second.exit_code, 0);
  EXPECT_NE(second.err.find("already serving"), std::string::npos) << second.err;
  EXPECT_NE(second.err.find(std::to_string(agent_->pid())), std::string::npos) << second.err;
  EXPECT_EQ(Gpuctl({"health"}).exit_code, 0);
}

// Two agents on one state directory would both rewrite its job records and
// append to its event journal: the second refuses (exit 2) and names the
// first, whatever socket it was given.
TEST_F(HealthIntegration, SecondInstanceOnSameStateDirRefusesWithExit2) {
  StartAgent();
  RunResult second = RunProgram({BinaryPath("gpuctld"), "--listen", "unix:" + dir_.path() + "/other.sock",
                                 "--state-dir", StateDir(), "--nvml-library", "/nonexistent", "--nvidia-smi",
                                 "/nonexistent", "--guard", "off"});
  EXPECT_EQ(second.exit_code, 2) << second.err;
  EXPECT_NE(second.err.find("--state-dir " + StateDir()), std::string::npos) << second.err;
  EXPECT_NE(second.err.find("pid " + std::to_string(agent_->pid())), std::string::npos) << second.err;
  EXPECT_FALSE(std::filesystem::exists(dir_.path() + "/other.sock"));
  EXPECT_EQ(Gpuctl({"health"}).exit_code, 0);
}

TEST_F(HealthIntegration, SigtermStopsPromptlyEvenWithAWatcher) {
  StartAgent();
  BackgroundProcess watcher({BinaryPath("gpuctl"), "--agent", address_, "health", "--watch", "--interval", "100ms"},
                            dir_.path() + "/watch.log");
  ASSERT_TRUE(WaitUntil([&] {
    std::ifstream in(dir_.path() + "/watch.log");
    std::string s((std::istreambuf_iterator<char>(in)), {});
    return s.find("cpus") != std::string::npos;
  }, std::chrono::seconds(5)));
  auto start = std::chrono::steady_clock::now();
  agent_->Signal(SIGTERM);
  int code = agent_->WaitForExit(std::chrono::seconds(5));
  auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
  EXPECT_EQ(code, 0) << AgentLog();
  EXPECT_LT(took.count(), 2000);
  struct stat st {};
  EXPECT_NE(stat(SocketPath().c_str(), &st), 0) << "socket left behind";
  // The watcher sees the agent go away and exits as unreachable.
  EXPECT_EQ(watcher.WaitForExit(std::chrono::seconds(5)), 3);
}

TEST_F(HealthIntegration, UnreachableAgentExits3AndSaysHowToStartIt) {
  address_ = UnixAddress();  // nothing listens there
  RunResult r = Gpuctl({"health"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find(SocketPath()), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("gpuctld"), std::string::npos) << r.err;
}

TEST_F(HealthIntegration, UsageErrorsExit2) {
  address_ = UnixAddress();
  EXPECT_EQ(Gpuctl({"--bogus", "health"}).exit_code, 2);
  EXPECT_EQ(Gpuctl({"-o", "yaml", "health"}).exit_code, 2);
  RunResult r = Gpuctl({"health", "--interval", "soon"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--interval"), std::string::npos) << r.err;
  EXPECT_EQ(Gpuctl({"health", "--interval", "10ms"}).exit_code, 2);
  EXPECT_EQ(RunProgram({BinaryPath("gpuctl"), "--agent", "no-port-here", "health"}).exit_code, 2);
}

TEST_F(HealthIntegration, DaemonRefusesBadFlags) {
  RunResult r = RunProgram({BinaryPath("gpuctld"), "--listen", "127.0.0.1:50051"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("mutual TLS"), std::string::npos) << r.err;
  r = RunProgram({BinaryPath("gpuctld"), "--listen", "unix:relative.sock"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("absolute"), std::string::npos) << r.err;
  r = RunProgram({BinaryPath("gpuctld"), "--no-such-flag"});
  EXPECT_EQ(r.exit_code, 2);
  r = RunProgram({BinaryPath("gpuctld"), "--version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("gpuctld "), std::string::npos);
}

TEST_F(HealthIntegration, ConfigFileIsReadAndTyposAreRefused) {
  dir_.WriteFile("good.json", "{\"listen\": [\"" + UnixAddress() + "\"], \"state_dir\": \"" + StateDir() + "\"}");
  StartAgent({"--config", dir_.path() + "/good.json"});
  dir_.WriteFile("typo.json", "{\"listn\": []}");
  RunResult r = RunProgram({BinaryPath("gpuctld"), "--config", dir_.path() + "/typo.json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("listn"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace gpuctl::testing
