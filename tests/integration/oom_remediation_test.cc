// --on-oom recover end to end: the real gpuctld and gpuctl, real tmux, and
// examples/train/toy_train.py printing PyTorch's OOM message the way a real
// run prints it. The seed incident replays: GPUs 5 and 7 out of memory at
// --max-anchors 1024, one relaunch with expandable_segments:True and 768,
// which passes the old step and succeeds.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/integration/process_support.h"
#include "tests/integration/train_fixture.h"

namespace gpuctl::testing {
namespace {

using nlohmann::json;

class OomRemediation : public TrainFixture {
 protected:
  // Polls until the job has ended for good: an ended run that a remediation
  // is about to relaunch is not the end.
  json WaitForFinal(const std::string& name, size_t attempts) {
    json job;
    bool done = WaitUntil([&] {
      job = Status(name);
      if (job.is_null() || job["state"] == "starting" || job["state"] == "running") return false;
      if (job["attempts"].size() < attempts) return false;
      // Its events are all there once its log is read: a run that ended
      // with a backlog (thousands of exceptions, a slow sanitized agent)
      // says so before the ticks have read its last lines.
      if (job["parsed_bytes"] != job["log_bytes"]) return false;
      return job["state"] == "succeeded" ||
             job["state_reason"].get<std::string>().find("gave up") != std::string::npos;
    }, std::chrono::seconds(60));
    EXPECT_TRUE(done) << job.dump(2) << AgentLog();
    return job;
  }

  std::vector<json> Events(const std::string& job, const std::string& kind) {
    std::vector<json> found;
    RunResult r = Gpuctl({"-o", "json", "events"});
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
      json e = json::parse(line);
      if (e["job"] == job && e["kind"] == kind) found.push_back(e);
    }
    return found;
  }

  std::vector<std::string> Toy(std::vector<std::string> args) const {
    std::vector<std::string> argv = {"python3", ToyTrain(), "--steps", "8", "--interval", "0.02",
                                     "--simulate-oom-at", "5"};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }
};

// A long, noisy run: 1200 exceptions of 5 KB each, then the OOM. Events are
// bounded by bytes, the OOM is never among those dropped, so the run is
// relaunched; and two such jobs never make the job list too big to send.
TEST_F(OomRemediation, AnOomAfterThousandsOfEventsIsStillSeenAndRemediated) {
  StartTrainAgent();
  for (const std::string name : {"noisy", "noisy2"}) {
    std::vector<std::string> start = {"train", "start", "--name", name, "--on-oom", "recover", "--"};
    for (const std::string& a : Toy({"--max-anchors", "1024", "--oom-above-anchors", "768", "--exceptions", "1200",
                                     "--exception-bytes", "5000"})) {
      start.push_back(a);
    }
    RunResult r = Gpuctl(start);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  for (const std::string name : {"noisy", "noisy2"}) {
    json job = WaitForFinal(name, 1);
    EXPECT_EQ(job["state"], "succeeded") << job.dump(2).substr(0, 4000);
    EXPECT_EQ(job["attempt"], 2);
    ASSERT_EQ(job["attempts"].size(), 1u);
    EXPECT_EQ(job["attempts"][0]["changes"], json({"PYTORCH_CUDA_ALLOC_CONF: (unset) -> expandable_segments:True",
                                                   "--max-anchors: 1024 -> 768"}));
    // The relaunched run's own events: the 1200 exceptions again, bounded,
    // with the count of those dropped, and the last one kept.
    EXPECT_GT(job["events_dropped"].get<uint64_t>(), 1000u) << name;
    EXPECT_LT(job["events"].size(), 200u) << name;
    EXPECT_NE(job["events"].back()["message"].get<std::string>().find("handled exception 1199"), std::string::npos);
  }
  EXPECT_EQ(Events("noisy", "oom_remediation").size(), 1u);
  RunResult list = Gpuctl({"-o", "json", "train", "list"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(json::parse(list.out)["jobs"].size(), 2u);
  RunResult top = Gpuctl({"top", "--once"});
  EXPECT_EQ(top.exit_code, 0) << top.err;
  EXPECT_NE(top.out.find("noisy2"), std::string::npos) << top.out;
}

TEST_F(OomRemediation, TheIncidentReplays) {
  StartTrainAgent();
  std::vector<std::string> start = {"train", "start", "--name", "dflash", "--on-oom", "recover", "--gpus",
                                    "0,1,2,3,4,5,6,7", "--retry-arg=--resume-from", "--retry-arg=latest", "--"};
  for (const std::string& a : Toy({"--max-anchors", "1024", "--oom-above-anchors", "768", "--oom-gpus", "5,7"})) {
    start.push_back(a);
  }
  RunResult r = Gpuctl(start);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json job = WaitForFinal("dflash", 1);
  EXPECT_EQ(job["state"], "succeeded") << job.dump(2);
  EXPECT_EQ(job["attempt"], 2);
  EXPECT_EQ(job["alloc_conf"], "expandable_segments:True");
  EXPECT_EQ(job["gpus"], "0,1,2,3,4,5,6,7");
  ASSERT_EQ(job["attempts"].size(), 1u) << job.dump(2);
  const json& first = job["attempts"][0];
  EXPECT_EQ(first["attempt"], 1);
  EXPECT_EQ(first["state"], "failed");
  EXPECT_EQ(first["step"], 4);
  EXPECT_EQ(first["changes"], json({"PYTORCH_CUDA_ALLOC_CONF: (unset) -> expandable_segments:True",
                                    "--max-anchors: 1024 -> 768"}));
  EXPECT_NE(first["run_id"], job["run_id"]);

  // The exact command lines, and each attempt's own log.
  std::vector<std::string> first_command = first["command"].get<std::vector<std::string>>();
  EXPECT_EQ(first_command, Toy({"--max-anchors", "1024", "--oom-above-anchors", "768", "--oom-gpus", "5,7"}));
  std::vector<std::string> now = job["command"].get<std::vector<std::string>>();
  std::vector<std::string> expected = Toy({"--max-anchors", "768", "--oom-above-anchors", "768", "--oom-gpus", "5,7"});
  EXPECT_EQ(now, expected);  // the spec's command; the retry args are added when it runs
  // What this run really ran: the turned-down knob and the retry args.
  std::vector<std::string> ran = expected;
  ran.insert(ran.end(), {"--resume-from", "latest"});
  EXPECT_EQ(job["run_command"].get<std::vector<std::string>>(), ran);
  EXPECT_EQ(job["run_env"]["PYTORCH_CUDA_ALLOC_CONF"], "expandable_segments:True");
  EXPECT_EQ(job["run_env"]["GPUCTL_ATTEMPT"], "2");
  // The first attempt's events are counted, not hidden by the relaunch.
  EXPECT_GE(first["events"].get<uint64_t>(), 1u) << first.dump(2);
  EXPECT_EQ(job["events_total"].get<uint64_t>(),
            first["events"].get<uint64_t>() + job["events"].size() + job["events_dropped"].get<uint64_t>());
  std::string old_log = ReadFile(first["log_path"].get<std::string>());
  EXPECT_NE(old_log.find("max_anchors=1024"), std::string::npos) << old_log;
  EXPECT_NE(old_log.find("GPU 7 has a total capacity"), std::string::npos);
  std::string log = ReadFile(StateDir() + "/jobs/dflash/output.log");
  EXPECT_NE(log.find("max_anchors=768"), std::string::npos) << log;
  EXPECT_NE(log.find("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"), std::string::npos) << log;
  EXPECT_NE(log.find("attempt=2 extra=--resume-from latest"), std::string::npos) << log;
  EXPECT_EQ(log.find("out of memory"), std::string::npos);

  // One decision for both GPUs, then the note that it held.
  std::vector<json> decisions = Events("dflash", "oom_remediation");
  ASSERT_EQ(decisions.size(), 1u);
  const json& fields = decisions[0]["fields"];
  ASSERT_EQ(fields["gpus"].size(), 2u);
  EXPECT_EQ(fields["gpus"][0]["gpu"], 5);
  EXPECT_EQ(fields["gpus"][1]["gpu"], 7);
  EXPECT_EQ(fields["gpus"][0]["tried_bytes"], 16ull << 30);
  EXPECT_EQ(fields["gpus"][0]["reserved_unallocated_bytes"], 0);
  EXPECT_EQ(fields["fragmentation"], false);
  EXPECT_EQ(fields["next_attempt"], 2);
  std::vector<json> held = Events("dflash", "oom_remediation_held");
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0]["fields"]["last_attempt_step"], 4);

  // The lineage in text.
  RunResult text = Gpuctl({"train", "status", "dflash"});
  EXPECT_NE(text.out.find("#1 run " + first["run_id"].get<std::string>() + ": failed, step 4"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("then PYTORCH_CUDA_ALLOC_CONF: (unset) -> expandable_segments:True, --max-anchors: 1024 -> 768"),
            std::string::npos) << text.out;
  EXPECT_NE(text.out.find("\nrun command: "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(" this run)"), std::string::npos) << text.out;
}

TEST_F(OomRemediation, FragmentationIsFixedByExpandableSegmentsAlone) {
  StartTrainAgent();
  std::vector<std::string> start = {"train", "start", "--name", "frag", "--on-oom", "recover", "--anchors", "1024",
                                    "--"};
  for (const std::string& a : Toy({"--fragmented"})) start.push_back(a);
  ASSERT_EQ(Gpuctl(start).exit_code, 0);
  json job = WaitForFinal("frag", 1);
  EXPECT_EQ(job["state"], "succeeded") << job.dump(2);
  EXPECT_EQ(job["anchors"], 1024);  // unchanged
  EXPECT_EQ(job["alloc_conf"], "expandable_segments:True");
  EXPECT_EQ(job["attempts"][0]["changes"], json({"PYTORCH_CUDA_ALLOC_CONF: (unset) -> expandable_segments:True"}));
  EXPECT_EQ(Events("frag", "oom_remediation")[0]["fields"]["fragmentation"], true);
}

TEST_F(OomRemediation, GivesUpWhenTheRetriesAreUsed) {
  StartTrainAgent();
  std::vector<std::string> start = {"train", "start", "--name", "hopeless", "--on-oom", "recover", "--oom-retries",
                                    "1", "--anchors", "1024", "--"};
  for (const std::string& a : Toy({"--oom-above-anchors", "10"})) start.push_back(a);
  ASSERT_EQ(Gpuctl(start).exit_code, 0);
  json job = WaitForFinal("hopeless", 1);
  EXPECT_EQ(job["state"], "failed");
  EXPECT_EQ(job["attempt"], 2);
  EXPECT_NE(job["state_reason"].get<std::string>().find("OOM remediation gave up: the 1 OOM relaunches allowed"),
            std::string::npos) << job.dump(2);
  ASSERT_EQ(Events("hopeless", "oom_gave_up").size(), 1u);
  EXPECT_EQ(Events("hopeless", "oom_remediation").size(), 1u);
}

// The OOM happens while the agent is down (kill -9): the restarted agent
// reads the log, decides and relaunches all the same, once.
TEST_F(OomRemediation, AnOomWhileTheAgentIsDownIsRecoveredAfterItsRestart) {
  StartTrainAgent();
  std::vector<std::string> start = {"train", "start", "--name", "unattended", "--on-oom", "recover", "--anchors",
                                    "1024", "--", "python3", ToyTrain(), "--steps", "6", "--interval", "0.1",
                                    "--simulate-oom-at", "3", "--oom-above-anchors", "768"};
  ASSERT_EQ(Gpuctl(start).exit_code, 0);
  agent_->Signal(SIGKILL);
  agent_->WaitForExit(std::chrono::seconds(5));
  std::this_thread::sleep_for(std::chrono::milliseconds(800));  // the run OOMs at step 3, ~0.3 s in
  StartTrainAgent();
  json job = WaitForFinal("unattended", 1);
  EXPECT_EQ(job["state"], "succeeded") << job.dump(2);
  EXPECT_EQ(job["anchors"], 768);
  ASSERT_EQ(job["attempts"].size(), 1u);
  EXPECT_EQ(job["attempts"][0]["state"], "failed");
  EXPECT_EQ(Events("unattended", "oom_remediation").size(), 1u);
}

TEST_F(OomRemediation, WithoutRecoverAnOomJustFails) {
  StartTrainAgent();
  std::vector<std::string> start = {"train", "start", "--name", "plain", "--anchors", "1024", "--"};
  for (const std::string& a : Toy({})) start.push_back(a);
  ASSERT_EQ(Gpuctl(start).exit_code, 0);
  json job = WaitForEnd("plain");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // a relaunch would have come by now
  job = Status("plain");
  EXPECT_EQ(job["state"], "failed");
  EXPECT_EQ(job["attempts"].size(), 0u);
  EXPECT_EQ(job["on_oom"]["policy"], "fail");
  EXPECT_TRUE(Events("plain", "oom_remediation").empty());
  // The remediation flags need --on-oom recover.
  RunResult r = Gpuctl({"train", "start", "--name", "x", "--oom-retries", "2", "--", "true"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("act only with --on-oom recover"), std::string::npos) << r.err;
  r = Gpuctl({"train", "start", "--name", "x", "--on-oom", "recover", "--oom-knob", "--batch:1.5", "--", "true"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("the factor must be a number between 0 and 1"), std::string::npos) << r.err;
}

// The GPU tests: an agent with the fake NVML, whose processes a test sets
// (FAKE_NVML_PROCESSES, "GPU PID MIB" lines) while it runs.
class GpuJobs : public OomRemediation {
 protected:
  // Starts the agent with no GPU processes; returns the file that lists them.
  std::string StartGpuAgent() {
    std::string processes = dir_.path() + "/nvml-processes";
    { std::ofstream(processes) << ""; }
    std::map<std::string, std::string> env = AgentEnv();
    env["FAKE_NVML_PROCESSES"] = processes;
    std::vector<std::string> flags = AgentFlags();
    flags.insert(flags.end(), {"--nvml-library", std::string(GPUCTL_BINARY_DIR) + "/tests/fake_nvml/libnvidia-ml.so.1"});
    StartAgent(flags, env);
    agent_flags_ = flags;
    agent_env_ = env;
    return processes;
  }
  void RestartGpuAgent() {
    agent_->Signal(SIGKILL);
    agent_->WaitForExit(std::chrono::seconds(5));
    StartAgent(agent_flags_, agent_env_);
  }
  std::vector<std::string> agent_flags_;
  std::map<std::string, std::string> agent_env_;
};

// Per-job GPU memory: the fake NVML's processes (changed while the agent
// runs) mapped to the job by its process group; 95% is gpu_memory_high.
TEST_F(GpuJobs, AJobsGpuMemoryIsItsProcessesWithThePeakAndTheHighMark) {
  const std::string processes = StartGpuAgent();
  ASSERT_EQ(Gpuctl({"train", "start", "--name", "mem", "--", "python3", ToyTrain(), "--steps", "200", "--interval",
                    "0.05"})
                .exit_code,
            0);
  json job = Status("mem");
  int64_t pid = job["pid"].get<int64_t>();
  ASSERT_GT(pid, 0);
  auto write = [&](const std::string& text) {
    std::ofstream out(processes + ".part");
    out << text;
    out.close();
    std::rename((processes + ".part").c_str(), processes.c_str());
  };
  // GPU 0 is the H200 of the capture (143771 MiB); pid 1 is no job's.
  write("0 " + std::to_string(pid) + " 137000\n0 1 500\n");
  ASSERT_TRUE(WaitUntil([&] {
    job = Status("mem");
    return job["gpu_memory"].size() == 1 && job["gpu_memory"][0]["used_bytes"] == 137000ull << 20;
  }, std::chrono::seconds(10))) << job.dump(2) << AgentLog();
  EXPECT_EQ(job["gpu_memory"][0]["index"], 0);
  EXPECT_EQ(job["gpu_memory"][0]["total_bytes"], 143771ull << 20);
  write("0 " + std::to_string(pid) + " 1000\n");
  ASSERT_TRUE(WaitUntil([&] {
    job = Status("mem");
    return job["gpu_memory"][0]["used_bytes"] == 1000ull << 20;
  }, std::chrono::seconds(10))) << job.dump(2);
  EXPECT_EQ(job["gpu_memory"][0]["peak_bytes"], 137000ull << 20);
  std::vector<json> high = Events("mem", "gpu_memory_high");
  ASSERT_EQ(high.size(), 1u);
  EXPECT_EQ(high[0]["fields"]["gpu"], 0);
  EXPECT_EQ(high[0]["fields"]["used_bytes"], 137000ull << 20);
  RunResult text = Gpuctl({"train", "status", "mem"});
  EXPECT_NE(text.out.find("gpu 0:      1000.0 MiB now, peak 133.8 GiB of 140.4 GiB"), std::string::npos) << text.out;
  Gpuctl({"train", "stop", "mem"});
}

// The GPU queue with the fake NVML's two GPUs: three one-GPU jobs, the
// third queued (saying what it waits for), a restart while it waits, its
// admission when a GPU frees, and an outside process that makes a GPU busy.
TEST_F(GpuJobs, JobsQueueForGpusInOrderAcrossARestart) {
  const std::string processes = StartGpuAgent();
  auto start = [&](const std::string& name, std::vector<std::string> extra) {
    std::vector<std::string> argv = {"train", "start", "--name", name};
    argv.insert(argv.end(), extra.begin(), extra.end());
    for (const char* a : {"--", "sleep", "600"}) argv.emplace_back(a);
    return Gpuctl(argv);
  };
  ASSERT_EQ(start("a", {"--num-gpus", "1"}).exit_code, 0);
  ASSERT_EQ(start("b", {"--num-gpus", "1"}).exit_code, 0);
  RunResult third = start("c", {"--num-gpus", "1"});
  ASSERT_EQ(third.exit_code, 0) << third.err;
  EXPECT_NE(third.out.find("queued job c (#1): waiting for 1 GPU: GPU 0 held by job a, GPU 1 held by job b"),
            std::string::npos) << third.out;
  EXPECT_EQ(Status("a")["gpus"], "0");
  EXPECT_EQ(Status("b")["gpus"], "1");
  json c = Status("c");
  EXPECT_EQ(c["state"], "queued");
  EXPECT_EQ(c["queue_position"], 1);
  ASSERT_EQ(start("d", {"--num-gpus", "1"}).exit_code, 0);
  EXPECT_EQ(Status("d")["queue_position"], 2);
  RunResult list = Gpuctl({"train", "list"});
  EXPECT_NE(list.out.find("#1 c waits for 1 GPU: GPU 0 held by job a, GPU 1 held by job b"), std::string::npos)
      << list.out;
  EXPECT_NE(list.out.find("#2 d waits for 1 GPU: GPU 0 held by job a, GPU 1 held by job b"), std::string::npos);
  // Refused at once: more than the host has.
  RunResult too_many = start("e", {"--num-gpus", "3"});
  EXPECT_EQ(too_many.exit_code, 2);
  EXPECT_NE(too_many.err.find("more GPUs than this host has (2)"), std::string::npos) << too_many.err;

  // A restart while they wait: still queued, in the same order.
  RestartGpuAgent();
  EXPECT_EQ(Status("c")["state"], "queued");
  EXPECT_EQ(Status("d")["queue_position"], 2);

  // GPU 0 frees: c (first come) is admitted onto it, d moves up.
  ASSERT_EQ(Gpuctl({"train", "stop", "a", "--grace", "1s"}).exit_code, 0);
  json admitted;
  ASSERT_TRUE(WaitUntil([&] {
    admitted = Status("c");
    return admitted["state"] == "running";
  }, std::chrono::seconds(10))) << admitted.dump(2) << AgentLog();
  EXPECT_EQ(admitted["gpus"], "0");
  EXPECT_EQ(Status("d")["queue_position"], 1);

  // An outside process holding GPU 1 (pid 1: not a job's) keeps d waiting
  // after b ends; `train stop` cancels it.
  { std::ofstream(processes) << "1 1 40960\n"; }
  ASSERT_TRUE(WaitUntil([&] {  // the agent's GPU reading is cached for up to 500 ms
    RunResult health = Gpuctl({"-o", "json", "health"});
    return health.out.find("\"pid\":1,") != std::string::npos;
  }, std::chrono::seconds(10)));
  ASSERT_EQ(Gpuctl({"train", "stop", "b", "--grace", "1s"}).exit_code, 0);
  json d;
  ASSERT_TRUE(WaitUntil([&] {
    d = Status("d");
    return d["waiting_for"] == "1 GPU: GPU 0 held by job c, GPU 1 has 40.0 GiB used by pid 1";
  }, std::chrono::seconds(10))) << d.dump(2);
  EXPECT_EQ(d["state"], "queued");
  ASSERT_EQ(Gpuctl({"train", "stop", "d"}).exit_code, 0);
  d = Status("d");
  EXPECT_EQ(d["state"], "stopped");
  EXPECT_NE(d["state_reason"].get<std::string>().find("cancelled while queued"), std::string::npos);
  Gpuctl({"train", "stop", "c", "--grace", "1s"});
}

// A job started without --gpus holds the GPU its processes are on; --gpu-mem
// alone is given the GPU it was placed on; what a launch would refuse is
// refused at once, not at the job's turn.
TEST_F(GpuJobs, PlacementSeesEveryJobsGpusAndGivesTheChosenOne) {
  const std::string processes = StartGpuAgent();
  ASSERT_EQ(Gpuctl({"train", "start", "--name", "anywhere", "--", "sleep", "600"}).exit_code, 0);
  int64_t pid = Status("anywhere")["pid"].get<int64_t>();
  { std::ofstream(processes) << "0 " << pid << " 30000\n"; }
  ASSERT_TRUE(WaitUntil([&] { return Status("anywhere")["gpu_memory"].size() == 1; }, std::chrono::seconds(10)));
  ASSERT_EQ(Gpuctl({"train", "start", "--name", "one", "--num-gpus", "1", "--", "sleep", "600"}).exit_code, 0);
  EXPECT_EQ(Status("one")["gpus"], "1") << "GPU 0 runs job anywhere";
  Gpuctl({"train", "stop", "one", "--grace", "1s"});
  ASSERT_EQ(Gpuctl({"train", "start", "--name", "mem", "--gpu-mem", "1G", "--", "sleep", "600"}).exit_code, 0);
  EXPECT_EQ(Status("mem")["gpus"], "1");
  // GPU 1 is held now: a bad --cwd is refused at once (exit 2), never queued.
  RunResult bad = Gpuctl({"train", "start", "--name", "bad", "--num-gpus", "1", "--cwd", "/nonexistent-dir", "--",
                          "true"});
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_NE(bad.err.find("no such directory"), std::string::npos) << bad.err;
  EXPECT_NE(Gpuctl({"train", "status", "bad"}).exit_code, 0);
  Gpuctl({"train", "stop", "mem", "--grace", "1s"});
  Gpuctl({"train", "stop", "anywhere", "--grace", "1s"});
}

// GPUs that processes in other pid namespaces fill (an agent in an LXC
// guest, beside containers) are not free: their pids are not alive here, and
// their memory is foreign all the same. A worker of a job that called setsid
// is still the job's (its cgroup says so; as root, where jobs have one).
TEST_F(GpuJobs, GpusFullOfProcessesThisAgentCannotSeeAreNotFree) {
  const std::string processes = StartGpuAgent();
  // Pid 4194000 is beyond what this test host hands out: someone else's.
  { std::ofstream(processes) << "0 4194000 90112\n"; }
  ASSERT_TRUE(WaitUntil([&] {
    RunResult health = Gpuctl({"-o", "json", "health"});
    return health.out.find("4194000") != std::string::npos;
  }, std::chrono::seconds(10)));
  const std::string pid_file = dir_.path() + "/worker.pid";
  ASSERT_EQ(Gpuctl({"train", "start", "--name", "w", "--num-gpus", "1", "--", "sh", "-c",
                    "setsid sleep 600 & echo $! > " + pid_file + "; wait"})
                .exit_code,
            0);
  EXPECT_EQ(Status("w")["gpus"], "1") << "GPU 0 is full";
  RunResult second = Gpuctl({"train", "start", "--name", "v", "--num-gpus", "1", "--", "sleep", "600"});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  json v = Status("v");
  EXPECT_EQ(v["state"], "queued") << v.dump(2);
  EXPECT_NE(v["waiting_for"].get<std::string>().find("GPU 0 has 88.0 GiB used by processes this agent cannot see"),
            std::string::npos)
      << v.dump(2);
  RunResult text = Gpuctl({"train", "status", "v"});
  EXPECT_NE(text.out.find("GPU 0 has 88.0 GiB used by processes this agent cannot see"), std::string::npos)
      << text.out;
  if (geteuid() == 0) {
    // The setsid'd worker appears on GPU 1, the job's: by its cgroup it is
    // job w's, so GPU 1 stays held by w (not "used by pid").
    std::string worker;
    ASSERT_TRUE(WaitUntil([&] { return !(worker = ReadFile(pid_file)).empty(); }, std::chrono::seconds(5)));
    worker.erase(worker.find_last_not_of("\n") + 1);
    { std::ofstream(processes) << "0 4194000 90112\n1 " << worker << " 20480\n"; }
    json w;
    ASSERT_TRUE(WaitUntil([&] {
      w = Status("w");
      return w["gpu_memory"].size() == 1 && w["gpu_memory"][0]["used_bytes"] == 20480ull << 20;
    }, std::chrono::seconds(10))) << w.dump(2) << AgentLog();
    EXPECT_NE(Status("v")["waiting_for"].get<std::string>().find("GPU 1 held by job w"), std::string::npos)
        << Status("v").dump(2);
  }
  Gpuctl({"train", "stop", "v"});
  Gpuctl({"train", "stop", "w", "--grace", "1s"});
}

}  // namespace
}  // namespace gpuctl::testing
