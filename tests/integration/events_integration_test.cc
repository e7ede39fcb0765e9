// gpuctl events against the real gpuctld: job events end to end in both
// forms and followed live, the empty backlog, following across an agent
// restart and shutdown, and an unreachable agent. (Guard events are checked
// by the privileged guard test.)
#include <signal.h>

#include <fstream>
#include <iterator>
#include <sstream>
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

// Each line of `gpuctl -o json events` about `job`, parsed.
std::vector<nlohmann::json> JobEvents(const std::string& out, const std::string& job) {
  std::vector<nlohmann::json> events;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    nlohmann::json e = nlohmann::json::parse(line);
    if (e["job"] == job) events.push_back(e);
  }
  return events;
}

TEST_F(Events, AJobsStartAndEndAreEventsInTextAndJsonAndFollowedLive) {
  StartTrainAgent();
  std::string followed = dir_.path() + "/followed.jsonl";
  BackgroundProcess follower({BinaryPath("gpuctl"), "--agent", address_, "-o", "json", "events", "-f"}, followed);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // let it subscribe
  RunResult start = Gpuctl({"train", "start", "--name", "evjob", "--", "python3", ToyTrain(), "--steps", "2",
                            "--interval", "0.01"});
  ASSERT_EQ(start.exit_code, 0) << start.err;
  std::vector<nlohmann::json> events;
  ASSERT_TRUE(WaitUntil([&] {
    RunResult r = Gpuctl({"-o", "json", "events"});
    events = JobEvents(r.out, "evjob");
    return r.exit_code == 0 && events.size() >= 2;
  }, std::chrono::seconds(30))) << AgentLog();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0]["kind"], "job_started");
  EXPECT_EQ(events[1]["kind"], "job_ended");
  EXPECT_LT(events[0]["seq"].get<uint64_t>(), events[1]["seq"].get<uint64_t>());
  EXPECT_GT(events[0]["time_unix_ms"].get<int64_t>(), 0);
  EXPECT_TRUE(events[0]["message"].is_string());
  EXPECT_GT(events[0]["fields"]["pid"].get<int64_t>(), 0);
  EXPECT_EQ(events[1]["fields"]["state"], "succeeded");
  EXPECT_EQ(events[1]["fields"]["exit_code"], 0);

  // --after skips what was seen.
  std::string after = std::to_string(events[0]["seq"].get<uint64_t>());
  std::vector<nlohmann::json> later = JobEvents(Gpuctl({"-o", "json", "events", "--after", after}).out, "evjob");
  ASSERT_EQ(later.size(), 1u);
  EXPECT_EQ(later[0]["kind"], "job_ended");

  RunResult text = Gpuctl({"events"});
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find(" job_started    evjob started with pid"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(" job_ended      evjob succeeded"), std::string::npos) << text.out;

  // The follower saw both as they happened.
  EXPECT_TRUE(WaitUntil([&] { return JobEvents(Slurp(followed), "evjob").size() == 2; }, std::chrono::seconds(5)))
      << Slurp(followed);
  EXPECT_TRUE(follower.running());
}

TEST_F(Events, EmptyBacklogPrintsNothingAndExitsZero) {
  StartTrainAgent();
  RunResult text = Gpuctl({"events"});
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_EQ(text.out, "");
  EXPECT_EQ(text.err, "");
  RunResult as_json = Gpuctl({"-o", "json", "events"});
  EXPECT_EQ(as_json.exit_code, 0) << as_json.err;
  EXPECT_EQ(as_json.out, "");
  // Numbers not used yet are said to be so (exit 2), not answered with nothing.
  RunResult after = Gpuctl({"events", "--after", "5"});
  EXPECT_EQ(after.exit_code, 2) << after.err;
  EXPECT_NE(after.err.find("--after 5 is past the newest event (0)"), std::string::npos) << after.err;
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
  EXPECT_EQ(Gpuctl({"events", "--after", "-1"}).exit_code, 2);
  EXPECT_EQ(Gpuctl({"events", "--bogus"}).exit_code, 2);
}

TEST_F(Events, AFollowerDoesNotHoldUpShutdownAndFollowsTheRestartedAgent) {
  StartTrainAgent();
  std::string err_path = dir_.path() + "/events.err";
  BackgroundProcess follower({BinaryPath("gpuctl"), "--agent", address_, "events", "-f"}, err_path);
  // A job's event shows that the follower is connected.
  ASSERT_EQ(Gpuctl({"train", "start", "--name", "marker", "--", "python3", ToyTrain(), "--steps", "1"}).exit_code, 0);
  ASSERT_TRUE(WaitUntil([&] { return Slurp(err_path).find("job_started") != std::string::npos; },
                        std::chrono::seconds(10)))
      << Slurp(err_path);

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
