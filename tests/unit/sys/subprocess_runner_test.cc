#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "agents/sys/command_runner.h"
#include "tests/fakes/scoped_env.h"
#include "tests/fakes/temp_dir.h"

namespace gpuctl::sys {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

class SubprocessRunnerTest : public ::testing::Test {
 protected:
  Result<CommandOutput> Sh(const std::string& script, const RunOptions& options = {}) {
    return runner_->Run({"/bin/sh", "-c", script}, options);
  }
  std::unique_ptr<CommandRunner> runner_ = MakeSubprocessRunner();
};

TEST_F(SubprocessRunnerTest, ReportsExitCodeAndSeparatesStreams) {
  auto out = Sh("echo to-out; echo to-err >&2; exit 3");
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->exit_code, 3);
  EXPECT_EQ(out->term_signal, 0);
  EXPECT_EQ(out->stdout_text, "to-out\n");
  EXPECT_EQ(out->stderr_text, "to-err\n");
}

TEST_F(SubprocessRunnerTest, FindsProgramOnPath) {
  auto out = runner_->Run({"sh", "-c", "printf ok"});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->exit_code, 0);
  EXPECT_EQ(out->stdout_text, "ok");
}

TEST_F(SubprocessRunnerTest, ReportsTheSignalThatEndedTheChild) {
  auto out = Sh("kill -TERM $$");
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->exit_code, -1);
  EXPECT_EQ(out->term_signal, SIGTERM);
}

// The agent blocks SIGTERM to wait for it on one thread; a child must not
// inherit that mask or it could never be stopped.
TEST_F(SubprocessRunnerTest, ChildStartsWithSignalsUnblocked) {
  sigset_t term, old;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  ASSERT_EQ(pthread_sigmask(SIG_BLOCK, &term, &old), 0);
  auto out = Sh("kill -TERM $$; exit 0");
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->term_signal, SIGTERM);
}

// True once `pid` has ended (gone, or a zombie not yet reaped by its new parent).
bool Ended(const std::string& pid) {
  for (int i = 0; i < 200; ++i) {
    std::ifstream stat("/proc/" + pid + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    if (text.empty() || text.find(") Z ") != std::string::npos) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

TEST_F(SubprocessRunnerTest, TimeoutKillsTheChildAndWhatItStarted) {
  testing::TempDir dir;
  std::string pid_file = dir.path() + "/grandchild.pid";
  RunOptions options;
  options.timeout = 300ms;
  auto start = std::chrono::steady_clock::now();
  // The background sleep keeps stdout open after the shell itself is killed.
  auto out = Sh("sleep 30 & echo $! > " + pid_file + "; wait", options);
  auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), ErrorCode::kUnavailable);
  EXPECT_THAT(out.status().message(), HasSubstr("did not finish within 300 ms"));
  EXPECT_LT(took, 5s);

  std::ifstream in(pid_file);
  std::string grandchild;
  ASSERT_TRUE(std::getline(in, grandchild));
  EXPECT_TRUE(Ended(grandchild)) << "the background sleep " << grandchild << " outlived the timeout";
}

TEST_F(SubprocessRunnerTest, TimeoutAppliesWhenTheChildClosedItsOutput) {
  RunOptions options;
  options.timeout = 300ms;
  auto start = std::chrono::steady_clock::now();
  auto out = Sh("exec >&- 2>&-; sleep 30", options);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), ErrorCode::kUnavailable);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

TEST_F(SubprocessRunnerTest, ProgramNotOnPathIsNotFound) {
  auto out = runner_->Run({"gpuctl-no-such-program"});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), ErrorCode::kNotFound);
  EXPECT_THAT(out.status().message(), HasSubstr("'gpuctl-no-such-program' not found on PATH"));
}

TEST_F(SubprocessRunnerTest, ExecFailureIsReportedWithErrno) {
  auto missing = runner_->Run({"/nonexistent/dir/tool"});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), ErrorCode::kNotFound);
  EXPECT_THAT(missing.status().message(),
              HasSubstr("cannot run '/nonexistent/dir/tool': No such file or directory"));

  testing::TempDir dir;
  dir.WriteFile("not-executable", "#!/bin/sh\necho hi\n");
  std::string path = dir.path() + "/not-executable";
  auto denied = runner_->Run({path});
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.status().code(), ErrorCode::kNotFound);
  EXPECT_THAT(denied.status().message(), HasSubstr("Permission denied"));
}

TEST_F(SubprocessRunnerTest, EmptyArgvIsInvalid) {
  auto out = runner_->Run({});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), ErrorCode::kInvalidArgument);
}

TEST_F(SubprocessRunnerTest, AddsEnvironmentOnTopOfTheCurrentOne) {
  testing::ScopedEnv inherited("GPUCTL_TEST_INHERITED", "from-parent");
  testing::ScopedEnv replaced("GPUCTL_TEST_REPLACED", "old");
  RunOptions options;
  options.env = {{"GPUCTL_TEST_EXTRA", "hello world"}, {"GPUCTL_TEST_REPLACED", "new"}};
  auto out = Sh("printf '%s|%s|%s' \"$GPUCTL_TEST_INHERITED\" \"$GPUCTL_TEST_EXTRA\" "
                "\"$GPUCTL_TEST_REPLACED\"",
                options);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->stdout_text, "from-parent|hello world|new");
}

TEST_F(SubprocessRunnerTest, PathInExtraEnvironmentDecidesTheLookup) {
  testing::TempDir dir;
  dir.WriteFile("gpuctl-test-tool", "#!/bin/sh\necho found-in-extra-path\n");
  ASSERT_EQ(::chmod((dir.path() + "/gpuctl-test-tool").c_str(), 0755), 0);
  RunOptions options;
  options.env = {{"PATH", dir.path() + ":/usr/bin:/bin"}};
  auto out = runner_->Run({"gpuctl-test-tool"}, options);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->stdout_text, "found-in-extra-path\n");
}

TEST_F(SubprocessRunnerTest, FeedsStdin) {
  RunOptions options;
  options.stdin_text = "line one\nline two\n";
  auto out = runner_->Run({"cat"}, options);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->stdout_text, "line one\nline two\n");
}

// More than a pipe holds each way: writing and reading must interleave.
TEST_F(SubprocessRunnerTest, LargeStdinThroughCatDoesNotDeadlock) {
  RunOptions options;
  options.stdin_text = std::string(1 << 20, 'x');
  auto out = runner_->Run({"cat"}, options);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->stdout_text.size(), size_t{1} << 20);
}

// The child exits without reading: the write gets EPIPE, and SIGPIPE must not
// end the test process.
TEST_F(SubprocessRunnerTest, ChildIgnoringStdinDoesNotKillUs) {
  RunOptions options;
  options.stdin_text = std::string(1 << 20, 'x');
  auto out = runner_->Run({"true"}, options);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->exit_code, 0);
}

TEST_F(SubprocessRunnerTest, WithoutStdinTextTheChildReadsEof) {
  auto out = runner_->Run({"cat"});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->stdout_text, "");
  EXPECT_EQ(out->exit_code, 0);
}

TEST_F(SubprocessRunnerTest, CapsOutputButLetsTheChildFinish) {
  RunOptions options;
  options.max_output_bytes = 1000;
  auto out = Sh("head -c 300000 /dev/zero; head -c 5000 /dev/zero >&2; exit 7", options);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->stdout_text.size(), 1000u);
  EXPECT_EQ(out->stderr_text.size(), 1000u);
  EXPECT_EQ(out->exit_code, 7);
}

TEST_F(SubprocessRunnerTest, ChildDoesNotInheritOtherDescriptors) {
  int fd = ::open("/dev/null", O_RDONLY);  // no O_CLOEXEC on purpose
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::dup2(fd, 93), 93);
  ::close(fd);
  auto out = Sh("[ -e /proc/self/fd/93 ] && echo leaked || echo closed");
  ::close(93);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->stdout_text, "closed\n");
}

TEST(FindExecutableTest, SearchesPathInOrderAndSkipsWhatCannotRun) {
  testing::TempDir first, second;
  first.WriteFile("tool", "data, not a program");  // not executable
  first.MakeDir("dir-tool");
  second.WriteFile("tool", "#!/bin/sh\n");
  second.WriteFile("dir-tool", "#!/bin/sh\n");
  ASSERT_EQ(::chmod((second.path() + "/tool").c_str(), 0755), 0);
  ASSERT_EQ(::chmod((second.path() + "/dir-tool").c_str(), 0755), 0);
  ASSERT_EQ(::chmod((first.path() + "/dir-tool").c_str(), 0755), 0);
  std::string path = first.path() + "::" + second.path() + "/";

  EXPECT_EQ(FindExecutable("tool", path), second.path() + "/tool");
  EXPECT_EQ(FindExecutable("dir-tool", path), second.path() + "/dir-tool");
  EXPECT_EQ(FindExecutable("absent", path), "");
  EXPECT_EQ(FindExecutable("tool", first.path()), "");
  EXPECT_EQ(FindExecutable("tool", ""), "");
  EXPECT_EQ(FindExecutable("", path), "");
}

TEST(FindExecutableTest, NameWithSlashIsTakenAsAPath) {
  testing::TempDir dir;
  dir.WriteFile("tool", "#!/bin/sh\n");
  std::string tool = dir.path() + "/tool";
  EXPECT_EQ(FindExecutable(tool, "/usr/bin"), "");  // not executable yet
  ASSERT_EQ(::chmod(tool.c_str(), 0755), 0);
  EXPECT_EQ(FindExecutable(tool, ""), tool);
}

// An empty PATH entry means "." to a shell; the agent must not run whatever
// lies in its working directory.
TEST(FindExecutableTest, EmptyEntryIsNotTheWorkingDirectory) {
  testing::TempDir dir;
  dir.WriteFile("tool", "#!/bin/sh\n");
  ASSERT_EQ(::chmod((dir.path() + "/tool").c_str(), 0755), 0);
  char cwd[4096];
  ASSERT_NE(::getcwd(cwd, sizeof cwd), nullptr);
  ASSERT_EQ(::chdir(dir.path().c_str()), 0);
  std::string found = FindExecutable("tool", ":/nonexistent");
  ASSERT_EQ(::chdir(cwd), 0);
  EXPECT_EQ(found, "");
}

}  // namespace
}  // namespace gpuctl::sys
