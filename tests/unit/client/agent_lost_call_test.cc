// A call that changes something (start, stop, rm, provision) and an agent
// that dies with it in hand (kill -9, the OOM killer, a host going down):
// the call may have gone through, so the client says that and how to check,
// never "cannot reach ... start the agent", which it keeps for an agent it
// could not reach at all.
#include <gtest/gtest.h>

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>

#include "client/agent_client.h"
#include "client/exit_codes.h"
#include "tests/fakes/temp_dir.h"
#include "tests/unit/client/cli_run.h"

namespace gpuctl::client {
namespace {

// A unix socket that speaks just enough HTTP/2 to take a gRPC call: its
// SETTINGS (gRPC calls a channel ready only once a server's arrive) and the
// ACK of the client's, then frames are read until a call's HEADERS come.
class OneCallAgent {
 public:
  enum class Then {
    kDie,          // close the connection with the call in hand
    kHold,         // keep the call unanswered until the test ends
    kNoHttp2,      // accept and close at once: a socket with no agent behind it
  };

  OneCallAgent(const std::string& path, Then then) : then_(then) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
    bound_ = fd_ >= 0 && ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 && ::listen(fd_, 8) == 0;
    thread_ = std::thread([this] { Serve(); });
  }
  ~OneCallAgent() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  bool bound() const { return bound_; }
  int calls_taken() const { return calls_.load(); }

 private:
  // Whole reads, or false when the client went away, the test ends or 5 s pass.
  bool ReadExactly(int fd, void* buf, size_t n) {
    auto* at = static_cast<char*>(buf);
    for (int waited_ms = 0; n > 0 && !stop_ && waited_ms < 5000;) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) {
        waited_ms += 20;
        continue;
      }
      ssize_t got = ::read(fd, at, n);
      if (got <= 0) return false;
      at += got;
      n -= static_cast<size_t>(got);
    }
    return n == 0;
  }

  void Serve() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      int conn = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (conn < 0) continue;
      if (then_ != Then::kNoHttp2) TakeOneCall(conn);
      if (then_ == Then::kHold) {
        while (!stop_) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      ::close(conn);
    }
  }

  void TakeOneCall(int conn) {
    static constexpr unsigned char kSettings[9] = {0, 0, 0, 4, 0, 0, 0, 0, 0};
    static constexpr unsigned char kSettingsAck[9] = {0, 0, 0, 4, 1, 0, 0, 0, 0};
    char preface[24];
    if (!ReadExactly(conn, preface, sizeof preface)) return;
    if (::write(conn, kSettings, sizeof kSettings) != sizeof kSettings) return;
    while (true) {
      unsigned char header[9];
      if (!ReadExactly(conn, header, sizeof header)) return;
      const size_t length = (size_t{header[0]} << 16) | (size_t{header[1]} << 8) | header[2];
      std::string payload(length, '\0');
      if (length > 0 && !ReadExactly(conn, payload.data(), length)) return;
      const unsigned char type = header[3], flags = header[4];
      if (type == 4 && (flags & 1) == 0 && ::write(conn, kSettingsAck, sizeof kSettingsAck) != sizeof kSettingsAck) {
        return;
      }
      if (type == 1) {  // HEADERS: a call
        ++calls_;
        return;
      }
    }
  }

  const Then then_;
  int fd_ = -1;
  bool bound_ = false;
  std::atomic<bool> stop_{false};
  std::atomic<int> calls_{0};
  std::thread thread_;
};

class AgentLostCallTest : public ::testing::Test {
 protected:
  std::string Socket() const { return dir_.path() + "/agent.sock"; }
  std::string Address() const { return "unix:" + Socket(); }
  testing::TempDir dir_;
};

void ExpectMayHaveGoneThrough(const Status& s, const std::string& what, const std::string& check) {
  EXPECT_EQ(s.code(), ErrorCode::kUnavailable) << s.message();
  EXPECT_NE(s.message().find("was lost during the call ("), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("; " + what + " may have gone through: check with " + check), std::string::npos)
      << s.message();
  EXPECT_EQ(s.message().find("cannot reach"), std::string::npos) << s.message();
  EXPECT_EQ(s.message().find("Start the agent"), std::string::npos) << s.message();
}

TEST_F(AgentLostCallTest, AStopTheAgentDiedWithMayHaveGoneThrough) {
  OneCallAgent agent(Socket(), OneCallAgent::Then::kDie);
  ASSERT_TRUE(agent.bound());
  CliRun r = RunGpuctl({"--agent", Address(), "train", "stop", "job", "--grace", "5m"});
  EXPECT_EQ(agent.calls_taken(), 1);
  EXPECT_EQ(r.code, kExitUnreachable);
  EXPECT_EQ(r.err.rfind("gpuctl: stopping job job: the connection to gpuctld at " + Address() +
                            " was lost during the call (",
                        0),
            0u)
      << r.err;
  EXPECT_NE(r.err.find("); the stop may have gone through: check with 'gpuctl train status job'\n"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("Start the agent"), std::string::npos) << r.err;
}

TEST_F(AgentLostCallTest, StartRemoveAndProvisionSayItToo) {
  OneCallAgent agent(Socket(), OneCallAgent::Then::kDie);
  ASSERT_TRUE(agent.bound());
  AgentClient client(Address());
  v1::StartJobRequest start;
  start.mutable_spec()->set_name("job");
  start.mutable_spec()->add_command("python3");
  ExpectMayHaveGoneThrough(client.StartJob(start).status(), "the start", "'gpuctl train status job'");
  ExpectMayHaveGoneThrough(client.RemoveJob("job").status(), "the removal",
                           "'gpuctl train status job' (no such job: it was removed)");
  ExpectMayHaveGoneThrough(client.Provision(v1::ProvisionRequest(), [](const v1::ProvisionEvent&) { return true; }),
                           "provisioning (in part or whole)", "'gpuctl probe'");
  EXPECT_EQ(agent.calls_taken(), 3);
}

TEST_F(AgentLostCallTest, ACallThatRanOutOfTimeMayHaveGoneThrough) {
  OneCallAgent agent(Socket(), OneCallAgent::Then::kHold);
  ASSERT_TRUE(agent.bound());
  AgentClient client(Address(), std::chrono::milliseconds(500));
  Status s = client.RemoveJob("job").status();
  EXPECT_EQ(s.code(), ErrorCode::kUnavailable);
  EXPECT_EQ(s.message().rfind("gpuctld at " + Address() + " did not answer in time (", 0), 0u) << s.message();
  EXPECT_NE(s.message().find("; the removal may have gone through: check with 'gpuctl train status job'"),
            std::string::npos)
      << s.message();
}

// Nobody there, or a socket with no agent behind it (an SSH tunnel to a host
// whose agent is down): nothing was sent, the agent must be started.
TEST_F(AgentLostCallTest, AnAgentNeverReachedIsStillCannotReach) {
  CliRun none = RunGpuctl({"--agent", Address(), "train", "stop", "job"});
  EXPECT_EQ(none.code, kExitUnreachable);
  EXPECT_NE(none.err.find("cannot reach gpuctld at " + Address()), std::string::npos) << none.err;
  EXPECT_NE(none.err.find("Start the agent"), std::string::npos) << none.err;
  EXPECT_EQ(none.err.find("may have gone through"), std::string::npos) << none.err;

  OneCallAgent mute(Socket(), OneCallAgent::Then::kNoHttp2);
  ASSERT_TRUE(mute.bound());
  for (const std::vector<std::string>& args : {std::vector<std::string>{"train", "stop", "job"},
                                               std::vector<std::string>{"train", "rm", "job"}}) {
    std::vector<std::string> with_agent = {"--agent", Address()};
    with_agent.insert(with_agent.end(), args.begin(), args.end());
    CliRun r = RunGpuctl(with_agent);
    EXPECT_EQ(r.code, kExitUnreachable) << args[1];
    EXPECT_NE(r.err.find("cannot reach gpuctld at " + Address()), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("may have gone through"), std::string::npos) << r.err;
  }
}

// A query has nothing to have gone through: a lost agent is one to start.
TEST_F(AgentLostCallTest, AQueryTheAgentDiedWithIsCannotReach) {
  OneCallAgent agent(Socket(), OneCallAgent::Then::kDie);
  ASSERT_TRUE(agent.bound());
  AgentClient client(Address());
  Status s = client.GetJob("job").status();
  EXPECT_EQ(s.code(), ErrorCode::kUnavailable);
  EXPECT_NE(s.message().find("cannot reach gpuctld at"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace gpuctl::client
