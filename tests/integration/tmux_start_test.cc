// Starting sessions at the moment the real tmux server exits (issue 20,
// defect 6: a burst of starts while the last session ended lost some to
// "server exited unexpectedly"). The moment is forced, not waited for: a
// socket that behaves as an exiting tmux server does, and a burst of
// starts racing the end of the server's only session, round after round.
// Each test has a tmux socket of its own that TearDown kills.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <latch>
#include <sstream>
#include <thread>

#include "agents/sys/command_runner.h"
#include "agents/sys/tmux.h"
#include "tests/fakes/temp_dir.h"
#include "tests/integration/process_support.h"
#include "tests/fakes/skip_policy.h"

namespace gpuctl::sys {
namespace {

using namespace std::chrono_literals;
using gpuctl::testing::TempDir;
using gpuctl::testing::WaitUntil;

// Where tmux -L NAME puts its socket (tmux.c: $TMUX_TMPDIR or /tmp, then tmux-UID).
std::string TmuxSocketDir() {
  const char* tmpdir = std::getenv("TMUX_TMPDIR");
  return std::string(tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp") + "/tmux-" + std::to_string(::getuid());
}

using gpuctl::testing::ReadText;

// What a tmux server does while it exits (server.c, server_accept: once it
// is exiting, a client that connects is closed at once; the client then
// prints "server exited unexpectedly"). Listens on the socket's path,
// treats the first client so, then goes away as the exited server has (no
// socket file), so that the next client starts a real server.
class ExitingServer {
 public:
  explicit ExitingServer(const std::string& path) : path_(path) {
    ::mkdir(TmuxSocketDir().c_str(), 0700);  // tmux wants it 0700 and ours
    listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
    ::unlink(path.c_str());
    ok_ = listen_fd_ >= 0 && ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
          ::listen(listen_fd_, 64) == 0;
    if (!ok_) error_ = std::strerror(errno);
    if (ok_) thread_ = std::thread([this] { Serve(); });
  }
  ~ExitingServer() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
    if (listen_fd_ >= 0) {  // never served: the path is still ours, not a real server's
      ::close(listen_fd_);
      ::unlink(path_.c_str());
    }
  }
  ExitingServer(const ExitingServer&) = delete;
  ExitingServer& operator=(const ExitingServer&) = delete;

  bool ok() const { return ok_; }
  const std::string& error() const { return error_; }
  int turned_away() const { return turned_away_.load(); }

 private:
  void Serve() {
    pollfd waiting{listen_fd_, POLLIN, 0};
    while (!stop_.load()) {
      if (::poll(&waiting, 1, 50) <= 0) continue;
      const int client = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client < 0) continue;
      // Gone before the client hears of it: its next try must find no server.
      ::close(listen_fd_);
      ::unlink(path_.c_str());
      listen_fd_ = -1;
      turned_away_.fetch_add(1);
      ::close(client);
      return;
    }
  }

  std::string path_;
  int listen_fd_ = -1;  // the thread's while it runs
  bool ok_ = false;
  std::string error_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<int> turned_away_{0};
};

// Counts new-session runs that met a server on its way out.
class CountingRunner : public CommandRunner {
 public:
  explicit CountingRunner(CommandRunner& inner) : inner_(inner) {}
  Result<CommandOutput> Run(const std::vector<std::string>& argv, const RunOptions& options) override {
    auto out = inner_.Run(argv, options);
    if (out.ok() && out->exit_code != 0 && out->stderr_text.find("server exited") != std::string::npos) {
      exiting_.fetch_add(1);
    }
    return out;
  }
  int exiting() const { return exiting_.load(); }

 private:
  CommandRunner& inner_;
  std::atomic<int> exiting_{0};
};

class TmuxStartTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* path = std::getenv("PATH");
    if (FindExecutable("tmux", path != nullptr ? path : "/usr/bin:/bin").empty()) {
      GPUCTL_SKIP() << "tmux is not installed (apt-get install tmux)";
    }
    static std::atomic<int> counter{0};
    socket_ = "gpuctl-start-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
    tmux_ = MakeTmux(counting_, socket_);
  }

  void TearDown() override {
    if (socket_.empty()) return;
    (void)RawTmux({"kill-server"});  // "no server running" is fine here
    ::unlink(SocketPath().c_str());  // tmux leaves its socket file behind
  }

  std::string SocketPath() const { return TmuxSocketDir() + "/" + socket_; }
  // tmux itself, on the test's socket, not through the seam.
  CommandOutput RawTmux(std::vector<std::string> args) {
    std::vector<std::string> argv = {"tmux", "-f", "/dev/null", "-L", socket_};
    argv.insert(argv.end(), args.begin(), args.end());
    auto out = runner_->Run(argv);
    return out.ok() ? *out : CommandOutput{-1, 0, "", out.status().ToString()};
  }

  std::unique_ptr<CommandRunner> runner_ = MakeSubprocessRunner();
  CountingRunner counting_{*runner_};
  std::string socket_;
  std::unique_ptr<Tmux> tmux_;
};

// The moment itself, every time: the only server there is exits as the
// start connects. The start goes on (a fresh server) and the job runs once.
TEST_F(TmuxStartTest, AStartThatMeetsTheServerExitingStillStartsTheJobOnce) {
  TempDir dir;
  const std::string ran = dir.path() + "/ran";
  ExitingServer exiting(SocketPath());
  ASSERT_TRUE(exiting.ok()) << "listening on " << SocketPath() << ": " << exiting.error();

  Status started = tmux_->NewSession({"gpuctl-rw25",
                                      {"/bin/sh", "-c", "echo ran >> \"$0\"; exec /bin/sleep 300", ran},
                                      {{"GPUCTL_RUN_ID", "r1"}},
                                      ""});
  EXPECT_EQ(exiting.turned_away(), 1) << "the start never met the exiting server";
  ASSERT_TRUE(started.ok()) << started.ToString();
  EXPECT_TRUE(tmux_->HasSession("gpuctl-rw25"));
  ASSERT_TRUE(WaitUntil([&] { return ReadText(ran) == "ran\n"; }, 10s)) << "the job never ran: '" << ReadText(ran) << "'";
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(ReadText(ran), "ran\n") << "the job ran more than once";
  auto sessions = tmux_->ListSessions();
  ASSERT_TRUE(sessions.ok()) << sessions.status().ToString();
  EXPECT_EQ(*sessions, std::vector<std::string>{"gpuctl-rw25"});
}

// The first layer: a server gpuctl starts sessions on does not exit when its
// last session ends, so the next start (the GPU queue's, at exactly that
// moment) finds it listening.
TEST_F(TmuxStartTest, TheServerOutlivesItsLastSession) {
  Status started = tmux_->NewSession({"brief", {"/bin/sh", "-c", "exit 0"}, {}, ""});
  ASSERT_TRUE(started.ok()) << started.ToString();
  ASSERT_TRUE(WaitUntil([&] { return !tmux_->HasSession("brief"); }, 10s));
  CommandOutput listed = RawTmux({"list-sessions"});
  EXPECT_EQ(listed.exit_code, 0) << "the server exited with its last session: " << listed.stderr_text;
  CommandOutput option = RawTmux({"show-options", "-s", "-v", "exit-empty"});
  EXPECT_EQ(option.stdout_text, "off\n") << option.stderr_text;
}

// As in the field: the server's only session ends while a burst of starts
// comes in, on a server that exits when empty (one an older agent started,
// so exit-empty is set back on each round). Not one start may fail.
TEST_F(TmuxStartTest, ABurstOfStartsAsTheLastSessionEndsLosesNone) {
  constexpr int kRounds = 100;
  constexpr int kStarts = 4;
  int failed = 0;
  std::string first_failure;
  for (int round = 0; round < kRounds && failed < 5; ++round) {
    CommandOutput last = RawTmux(
        {"new-session", "-d", "-s", "last", "--", "/bin/sleep", "300", ";", "set-option", "-s", "exit-empty", "on"});
    ASSERT_EQ(last.exit_code, 0) << last.stderr_text;
    std::latch ready(kStarts);
    std::latch go(1);
    std::vector<Status> results(kStarts);
    std::vector<std::thread> threads;
    for (int i = 0; i < kStarts; ++i) {
      threads.emplace_back([&, i] {
        const std::string name = "r" + std::to_string(round) + "-" + std::to_string(i);
        ready.count_down();
        go.wait();
        results[static_cast<size_t>(i)] =
            tmux_->NewSession({name, {"/bin/sleep", "300"}, {{"GPUCTL_RUN_ID", name}}, ""});
      });
    }
    ready.wait();
    // The last session is gone when kill-session returns; the server exits
    // on its next turn of the loop, just as the starts connect.
    (void)RawTmux({"kill-session", "-t", "=last"});
    go.count_down();
    for (auto& t : threads) t.join();
    for (int i = 0; i < kStarts; ++i) {
      const std::string name = "r" + std::to_string(round) + "-" + std::to_string(i);
      const Status& s = results[static_cast<size_t>(i)];
      if (!s.ok() || !tmux_->HasSession(name)) {
        if (++failed == 1) first_failure = name + ": " + (s.ok() ? "no session" : s.ToString());
      }
      (void)tmux_->KillSession(name);
    }
  }
  EXPECT_EQ(failed, 0) << "first: " << first_failure;
  std::cout << "starts that met the server exiting: " << counting_.exiting() << " of " << kRounds * kStarts << "\n";
}

}  // namespace
}  // namespace gpuctl::sys
