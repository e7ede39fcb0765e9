// gpuctl events against the real gpuctld. The agent publishes nothing by
// itself yet (guard and job events arrive with their producers), so this
// checks the empty backlog, the JSON form, following across an agent
// restart and shutdown, and an unreachable agent.
#include <signal.h>

#include <fstream>
#include <iterator>
#include <thread>

#include "tests/integration/train_fixture.h"

namespace gpuctl::testing {
namespace {

class Events : public TrainFixture {
 protected:
  std::string Slurp(const std::string& path) const {
    std::ifstream in(path);
    return std::string((std::istreambuf_iterator<char>(in)), {});
  }
};

TEST_F(Events, EmptyBacklogPrintsNothingAndExitsZero) {
  StartTrainAgent();
  RunResult text = Gpuctl({"events"});
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_EQ(text.out, "");
  EXPECT_EQ(text.err, "");
  RunResult json = Gpuctl({"-o", "json", "events"});
  EXPECT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(json.out, "");
  RunResult after = Gpuctl({"events", "--after", "5"});
  EXPECT_EQ(after.exit_code, 0) << after.err;
  EXPECT_EQ(after.out, "");
}

TEST_F(Events, FollowAgainstAStoppedAgentExits3AndSaysHowToStartIt) {
  address_ = UnixAddress();  // nothing listens there
  RunResult r = Gpuctl({"events", "-f"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find(SocketPath()), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("gpuctld"), std::string::npos) << r.err;
  EXPECT_EQ(Gpuctl({"events"}).exit_code, 3);
}

TEST_F(Events, BadFlagsExit2) {
  address_ = UnixAddress();
  EXPECT_EQ(Gpuctl({"events", "--after", "soon"}).exit_code, 2);
  EXPECT_EQ(Gpuctl({"events", "--bogus"}).exit_code, 2);
}

TEST_F(Events, AFollowerDoesNotHoldUpShutdownAndFollowsTheRestartedAgent) {
  StartTrainAgent();
  std::string err_path = dir_.path() + "/events.err";
  BackgroundProcess follower({BinaryPath("gpuctl"), "--agent", address_, "events", "-f"}, err_path);
  // The follower is connected once its probe and stream reached the agent;
  // nothing on the wire shows that, so give it a moment.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  ASSERT_TRUE(follower.running()) << Slurp(err_path);

  auto start = std::chrono::steady_clock::now();
  agent_->Signal(SIGTERM);
  EXPECT_EQ(agent_->WaitForExit(std::chrono::seconds(5)), 0) << AgentLog();
  auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
  EXPECT_LT(took.count(), 2000) << "the events stream held the agent open";

  EXPECT_TRUE(WaitUntil([&] { return Slurp(err_path).find("lost the agent") != std::string::npos; },
                        std::chrono::seconds(5)))
      << Slurp(err_path);
  EXPECT_TRUE(follower.running());
  StartTrainAgent();
  EXPECT_TRUE(WaitUntil([&] { return Slurp(err_path).find("reconnected") != std::string::npos; },
                        std::chrono::seconds(10)))
      << Slurp(err_path);
  EXPECT_TRUE(follower.running());
  follower.Signal(SIGTERM);
  follower.WaitForExit(std::chrono::seconds(5));
}

}  // namespace
}  // namespace gpuctl::testing
