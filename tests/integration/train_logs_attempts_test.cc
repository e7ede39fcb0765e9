// `gpuctl train logs` across attempts, end to end with the real gpuctld,
// gpuctl and tmux: -f of an --on-oom recover job goes on past attempt 1's
// OOM into attempt 2 with a separator line, and ends with the job;
// --attempt N reads one attempt; a queued job is waited for and said so.
#include <cstdio>
#include <fstream>
#include <string>

#include "tests/integration/process_support.h"
#include "tests/integration/train_fixture.h"

namespace gpuctl::testing {
namespace {

using nlohmann::json;

// A training run, as a shell script: it says which attempt it is and its
// --max-anchors; above 768 it waits for the test's go (so the follower is
// surely following attempt 1 first) and dies of CUDA OOM as PyTorch prints
// it, its last bytes with no newline.
constexpr const char* kOomingRun =
    "echo \"attempt $GPUCTL_ATTEMPT starts with --max-anchors $2\"\n"
    "if [ \"$2\" -gt 768 ]; then\n"
    "  while [ ! -e \"$3\" ]; do sleep 0.05; done\n"
    "  echo 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 16.00 GiB. GPU 0 has a total capacity "
    "of 139.80 GiB of which 11.29 GiB is free. Including non-PyTorch memory, this process has 128.51 GiB memory in "
    "use. Of the allocated memory 128.00 GiB is allocated by PyTorch, and 0 bytes is reserved by PyTorch but "
    "unallocated.'\n"
    "  printf 'dying'\n"
    "  exit 1\n"
    "fi\n"
    "echo \"attempt $GPUCTL_ATTEMPT done\"\n";

class TrainLogsAcrossAttempts : public TrainFixture {
 protected:
  std::string LogOf(const std::string& job) const { return StateDir() + "/jobs/" + job + "/output.log"; }

  // Polls until the job has ended for good: an ended run about to be
  // relaunched is not the end.
  json WaitForSucceeded(const std::string& name) {
    json job;
    EXPECT_TRUE(WaitUntil([&] {
      job = Status(name);
      return !job.is_null() && job["state"] == "succeeded";
    }, std::chrono::seconds(60))) << job.dump(2) << AgentLog();
    return job;
  }
};

TEST_F(TrainLogsAcrossAttempts, FollowGoesOnPastAnOomRelaunchAndEndsWithTheJob) {
  StartTrainAgent();
  const std::string go = dir_.path() + "/go";
  RunResult started = Gpuctl({"train", "start", "--name", "llm", "--on-oom", "recover", "--", "sh", "-c", kOomingRun,
                              "run", "--max-anchors", "1024", go});
  ASSERT_EQ(started.exit_code, 0) << started.err;

  const std::string out_path = dir_.path() + "/followed.out", err_path = dir_.path() + "/followed.err";
  BackgroundProcess follower({"sh", "-c", "exec \"$0\" --agent \"$1\" train logs -f llm > \"$2\"",
                              BinaryPath("gpuctl"), address_, out_path},
                             err_path);
  ASSERT_TRUE(WaitUntil([&] { return ReadFile(out_path).find("attempt 1 starts") != std::string::npos; },
                        std::chrono::seconds(20)))
      << ReadFile(err_path) << AgentLog();
  { std::ofstream(go) << "go\n"; }
  ASSERT_EQ(follower.WaitForExit(std::chrono::seconds(60)), 0) << ReadFile(err_path) << AgentLog();

  json job = WaitForSucceeded("llm");
  ASSERT_EQ(job["attempt"], 2) << job.dump(2);
  ASSERT_EQ(job["attempts"].size(), 1u) << job.dump(2);
  const json& first = job["attempts"][0];
  std::string changes;
  for (const json& c : first["changes"]) changes += (changes.empty() ? "" : ", ") + c.get<std::string>();
  EXPECT_NE(changes.find("--max-anchors: 1024 -> 768"), std::string::npos) << changes;
  const std::string attempt1 = ReadFile(first["log_path"].get<std::string>());
  const std::string attempt2 = ReadFile(LogOf("llm"));
  ASSERT_TRUE(attempt1.ends_with("dying")) << attempt1;
  EXPECT_EQ(attempt2, "attempt 2 starts with --max-anchors 768\nattempt 2 done\n");

  // Attempt 1's lines, the separator on a line of its own, attempt 2's; and
  // the follower ended (exit 0) only once attempt 2 had.
  const std::string separator =
      "--- attempt 2 (run " + job["run_id"].get<std::string>() + "): " + changes + " ---\n";
  EXPECT_EQ(ReadFile(out_path), attempt1 + "\n" + separator + attempt2);
  EXPECT_EQ(ReadFile(err_path), "");

  // --attempt 1: attempt 1's log alone, byte for byte.
  RunResult one = Gpuctl({"train", "logs", "llm", "--attempt", "1"});
  EXPECT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(one.out, attempt1);
  // -f from attempt 1 of an ended job: both, and the end.
  RunResult from_one = Gpuctl({"train", "logs", "-f", "llm", "--attempt", "1"});
  EXPECT_EQ(from_one.exit_code, 0) << from_one.err;
  EXPECT_EQ(from_one.out, attempt1 + "\n" + separator + attempt2);
  // No --attempt: the current run, as before.
  RunResult current = Gpuctl({"train", "logs", "llm"});
  EXPECT_EQ(current.exit_code, 0) << current.err;
  EXPECT_EQ(current.out, attempt2);

  for (const char* missing : {"3", "0"}) {
    RunResult none = Gpuctl({"train", "logs", "llm", "--attempt", missing});
    EXPECT_EQ(none.exit_code, 2) << missing << ": " << none.err;
    EXPECT_EQ(none.out, "");
  }
  RunResult three = Gpuctl({"train", "logs", "llm", "--attempt", "3"});
  EXPECT_NE(three.err.find("job 'llm' has no attempt 3: its attempts are 1-2"), std::string::npos) << three.err;
  RunResult ghost = Gpuctl({"train", "logs", "ghost", "--attempt", "1"});
  EXPECT_EQ(ghost.exit_code, 1) << ghost.err;  // an unknown job stays exit 1
}

// The GPU queue with the fake NVML: GPU 0 full of a process no job owns.
TEST_F(TrainLogsAcrossAttempts, AQueuedJobIsSaidAndFollowedOnceItStarts) {
  const std::string processes = dir_.path() + "/nvml-processes";
  { std::ofstream(processes) << "0 4194000 90112\n"; }  // pid 4194000: someone else's
  std::map<std::string, std::string> env = AgentEnv();
  env["FAKE_NVML_PROCESSES"] = processes;
  std::vector<std::string> flags = AgentFlags();
  flags.insert(flags.end(), {"--nvml-library", std::string(GPUCTL_BINARY_DIR) + "/tests/fake_nvml/libnvidia-ml.so.1"});
  StartAgent(flags, env);
  ASSERT_TRUE(WaitUntil([&] {
    return Gpuctl({"-o", "json", "health"}).out.find("4194000") != std::string::npos;
  }, std::chrono::seconds(10)));
  RunResult started = Gpuctl({"train", "start", "--name", "later", "--gpus", "0", "--", "sh", "-c",
                              "echo first line on GPU $CUDA_VISIBLE_DEVICES; echo last line"});
  ASSERT_EQ(started.exit_code, 0) << started.err;
  ASSERT_EQ(Status("later")["state"], "queued") << Status("later").dump(2);

  // Without -f: nothing to stdout, the reason on stderr, exit 0 (was 2).
  RunResult once = Gpuctl({"train", "logs", "later"});
  EXPECT_EQ(once.exit_code, 0) << once.err;
  EXPECT_EQ(once.out, "");
  EXPECT_NE(once.err.find("gpuctl: later is queued (waiting for "), std::string::npos) << once.err;
  EXPECT_NE(once.err.find("nothing is written yet"), std::string::npos) << once.err;

  const std::string out_path = dir_.path() + "/queued.out", err_path = dir_.path() + "/queued.err";
  BackgroundProcess follower({"sh", "-c", "exec \"$0\" --agent \"$1\" train logs -f later > \"$2\"",
                              BinaryPath("gpuctl"), address_, out_path},
                             err_path);
  ASSERT_TRUE(WaitUntil([&] { return ReadFile(err_path).find("following it once it starts") != std::string::npos; },
                        std::chrono::seconds(20)))
      << ReadFile(err_path);
  EXPECT_NE(ReadFile(err_path).find("gpuctl: later is queued (waiting for "), std::string::npos)
      << ReadFile(err_path);
  EXPECT_TRUE(follower.running());  // waiting, not ended
  EXPECT_EQ(ReadFile(out_path), "");

  {  // the outside process goes: GPU 0 frees and the job starts
    std::ofstream(processes + ".part") << "";
    std::rename((processes + ".part").c_str(), processes.c_str());
  }
  ASSERT_EQ(follower.WaitForExit(std::chrono::seconds(60)), 0) << ReadFile(err_path) << AgentLog();
  EXPECT_EQ(ReadFile(out_path), "first line on GPU 0\nlast line\n");
  EXPECT_EQ(Status("later")["state"], "succeeded");
}

}  // namespace
}  // namespace gpuctl::testing
