// Smaller wrong answers of gpuctl train, end to end with the real gpuctld,
// gpuctl and tmux: --tail 0, a log cut by copytruncate under `logs -f`, and
// a stop whose agent dies before it answers.
#include <signal.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "tests/integration/train_fixture.h"

namespace gpuctl::testing {
namespace {

class TrainLogEdges : public TrainFixture {
 protected:
  std::string LogOf(const std::string& job) const { return StateDir() + "/jobs/" + job + "/output.log"; }
  bool LogHas(const std::string& job, const std::string& text, std::chrono::milliseconds timeout) const {
    return WaitUntil([&] { return ReadFile(LogOf(job)).find(text) != std::string::npos; }, timeout);
  }
};

TEST_F(TrainLogEdges, TailZeroPrintsNothingAndFollowsFromTheEnd) {
  StartTrainAgent();
  ASSERT_EQ(Gpuctl({"train", "start", "--name", "quiet", "--", "sh", "-c", "echo one; echo two; sleep 3; echo three"})
                .exit_code,
            0);
  ASSERT_TRUE(LogHas("quiet", "two\n", std::chrono::seconds(10)));
  RunResult none = Gpuctl({"train", "logs", "--tail", "0", "quiet"});
  EXPECT_EQ(none.exit_code, 0) << none.err;
  EXPECT_EQ(none.out, "");
  RunResult next = Gpuctl({"train", "logs", "-f", "--tail", "0", "quiet"});
  EXPECT_EQ(next.exit_code, 0) << next.err;
  EXPECT_EQ(next.out, "three\n");
}

// logrotate's copytruncate: the log is copied away and cut to 0 while the job
// writes on (it appends, so its next line lands at the new start).
TEST_F(TrainLogEdges, ALogCutUnderAFollowIsSaidAndFollowedFromItsNewStart) {
  StartTrainAgent();
  ASSERT_EQ(Gpuctl({"train", "start", "--name", "rotated", "--", "sh", "-c",
                    "i=0; while [ $i -lt 60 ]; do echo \"line $i of the job\"; i=$((i+1)); sleep 0.05; done"})
                .exit_code,
            0);
  const std::string out_path = dir_.path() + "/followed.out", err_path = dir_.path() + "/followed.err";
  BackgroundProcess follower({"sh", "-c", "exec \"$0\" --agent \"$1\" train logs -f rotated > \"$2\"",
                              BinaryPath("gpuctl"), address_, out_path},
                             err_path);
  ASSERT_TRUE(LogHas("rotated", "line 20 of the job\n", std::chrono::seconds(10)));
  ASSERT_EQ(::truncate(LogOf("rotated").c_str(), 0), 0);
  EXPECT_EQ(follower.WaitForExit(std::chrono::seconds(30)), 0) << ReadFile(err_path);
  const std::string followed = ReadFile(out_path), after_cut = ReadFile(LogOf("rotated"));
  ASSERT_NE(after_cut.find("line 59 of the job\n"), std::string::npos) << after_cut;
  EXPECT_TRUE(followed.ends_with(after_cut)) << followed;
  // Whole lines only: nothing torn from the middle of the new content.
  for (size_t at = 0; at < followed.size();) {
    size_t end = followed.find('\n', at);
    ASSERT_NE(end, std::string::npos) << followed;
    std::string line = followed.substr(at, end - at);
    EXPECT_TRUE(line.starts_with("line ") && line.ends_with(" of the job")) << "torn: '" << line << "'";
    at = end + 1;
  }
  EXPECT_NE(ReadFile(err_path).find("gpuctl: output.log of rotated was truncated"), std::string::npos)
      << ReadFile(err_path);
}

// The agent dies (kill -9) while a stop waits out the job's grace: the stop
// may have gone through, and the message says how to check, not "start the agent".
TEST_F(TrainLogEdges, AStopWhoseAgentDiesMidCallMayHaveGoneThrough) {
  StartTrainAgent();
  ASSERT_EQ(Gpuctl({"train", "start", "--name", "stubborn", "--", "sh", "-c",
                    "trap '' TERM; echo ignoring-term; sleep 60 & wait; sleep 60"})
                .exit_code,
            0);
  ASSERT_TRUE(LogHas("stubborn", "ignoring-term", std::chrono::seconds(10))) << "the job never set its trap";
  const std::string err_path = dir_.path() + "/stop.err";
  BackgroundProcess stop({BinaryPath("gpuctl"), "--agent", address_, "train", "stop", "stubborn", "--grace", "60s"},
                         err_path);
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));  // the stop is in the agent's hands
  agent_->Signal(SIGKILL);
  agent_->WaitForExit(std::chrono::seconds(5));
  EXPECT_EQ(stop.WaitForExit(std::chrono::seconds(20)), 3);
  const std::string err = ReadFile(err_path);
  EXPECT_NE(err.find("gpuctl: stopping job stubborn: the connection to gpuctld at " + address_ +
                     " was lost during the call ("),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("the stop may have gone through: check with 'gpuctl train status stubborn'"), std::string::npos)
      << err;
  EXPECT_EQ(err.find("Start the agent"), std::string::npos) << err;

  // With no agent at all, it is still one to start.
  RunResult unreached = Gpuctl({"train", "stop", "stubborn"});
  EXPECT_EQ(unreached.exit_code, 3);
  EXPECT_NE(unreached.err.find("cannot reach gpuctld at " + address_), std::string::npos) << unreached.err;
}

}  // namespace
}  // namespace gpuctl::testing
