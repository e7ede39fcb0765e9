// A job's log fills the disk that holds the agent's state (a 3 MiB tmpfs
// here), then the job exits 7. Its end must still be recorded as it was: the
// exit code kept (the wrapper writes it over space it set aside), the state
// saying the disk was full, and job_ended announced once however often the
// agent restarts. Needs root (mount).
#include <signal.h>
#include <sys/mount.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>

#include <gtest/gtest.h>

#include "tests/integration/train_fixture.h"
#include "tests/fakes/skip_policy.h"

namespace gpuctl::testing {
namespace {

using nlohmann::json;

class FullDisk : public TrainFixture {
 protected:
  void SetUp() override {
    TrainFixture::SetUp();
    if (geteuid() != 0) GPUCTL_SKIP() << "needs root to mount a small tmpfs";
    std::filesystem::create_directories(StateDir());
    if (::mount("tmpfs", StateDir().c_str(), "tmpfs", 0, "size=3m,mode=0700") != 0) {
      GPUCTL_SKIP() << "cannot mount a tmpfs at " << StateDir();
    }
    mounted_ = true;
  }
  void TearDown() override {
    if (agent_) {
      agent_->Signal(SIGKILL);
      agent_->WaitForExit(std::chrono::seconds(5));
    }
    TrainFixture::TearDown();
    if (mounted_) ::umount2(StateDir().c_str(), MNT_DETACH);
  }

  // The job_ended events of `name`, as the agent's journal has them.
  int EndsAnnounced(const std::string& name) {
    RunResult r = Gpuctl({"-o", "json", "events"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    int ends = 0;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
      json e = json::parse(line);
      if (e["kind"] == "job_ended" && e["job"] == name) ++ends;
    }
    return ends;
  }

  bool mounted_ = false;
};

TEST_F(FullDisk, AJobThatFillsTheDiskKeepsItsExitCodeAndEndsOnce) {
  StartTrainAgent();
  RunResult started = Gpuctl({"train", "start", "--name", "fill", "--", "sh", "-c",
                              "head -c 8388608 /dev/zero; echo; exit 7"});
  ASSERT_EQ(started.exit_code, 0) << started.err;
  json job = WaitForEnd("fill");
  EXPECT_EQ(job.value("state", ""), "failed") << job.dump(2) << AgentLog();
  EXPECT_EQ(job["exit_code"], 7) << job.dump(2);
  EXPECT_NE(job.value("state_reason", "").find("is full"), std::string::npos) << job.dump(2);
  ASSERT_EQ(EndsAnnounced("fill"), 1);

  // The agent dies and comes back, twice, with the disk still full: the end
  // is read from the record, not settled (and announced) again.
  for (int restart = 0; restart < 2; ++restart) {
    agent_->Signal(SIGKILL);
    agent_->WaitForExit(std::chrono::seconds(5));
    StartTrainAgent();
    json again = Status("fill");
    EXPECT_EQ(again.value("state", ""), "failed") << again.dump(2) << AgentLog();
    EXPECT_EQ(again["exit_code"], 7) << again.dump(2);
    EXPECT_EQ(EndsAnnounced("fill"), 1) << AgentLog();
  }
}

}  // namespace
}  // namespace gpuctl::testing
