// The commands people reach for first, end to end with the real gpuctld and
// gpuctl and real tmux: train wait, list --state and --watch, rm --ended,
// events --job --kind, attach, completion of job names, health --count.
#include <signal.h>

#include <fstream>
#include <sstream>

#include "tests/integration/train_fixture.h"

namespace gpuctl::testing {
namespace {

using nlohmann::json;

class EverydayCommands : public TrainFixture {
 protected:
  // ok exits 0, bad exits 3, long sleeps; returns once ok and bad have ended.
  void StartThree() {
    StartTrainAgent();
    ASSERT_EQ(Gpuctl({"train", "start", "--name", "ok", "--", "sh", "-c", "exit 0"}).exit_code, 0);
    ASSERT_EQ(Gpuctl({"train", "start", "--name", "bad", "--", "sh", "-c", "echo dying; exit 3"}).exit_code, 0);
    ASSERT_EQ(Gpuctl({"train", "start", "--name", "long", "--", "sleep", "120"}).exit_code, 0);
  }
  std::vector<json> JsonLines(const std::string& text) const {
    std::vector<json> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(json::parse(line));
    return lines;
  }
  std::vector<std::string> Names(const json& list) const {
    std::vector<std::string> names;
    for (const json& job : list["jobs"]) names.push_back(job["name"]);
    return names;
  }
};

TEST_F(EverydayCommands, WaitExitsWithTheJobsOwnResult) {
  ASSERT_NO_FATAL_FAILURE(StartThree());
  RunResult ok = Gpuctl({"train", "wait", "ok"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(ok.out.rfind("job ok: succeeded (exit 0)", 0), 0u) << ok.out;
  RunResult bad = Gpuctl({"train", "wait", "bad"});
  EXPECT_EQ(bad.exit_code, 1) << bad.err;
  EXPECT_EQ(bad.out.rfind("job bad: failed (exit 3)", 0), 0u) << bad.out;
  RunResult timed_out = Gpuctl({"train", "wait", "long", "--timeout", "1s"});
  EXPECT_EQ(timed_out.exit_code, 124) << timed_out.err;
  EXPECT_NE(timed_out.err.find("still runs"), std::string::npos) << timed_out.err;
  EXPECT_EQ(Status("long")["state"], "running");
  RunResult json_ok = Gpuctl({"-o", "json", "train", "wait", "ok"});
  EXPECT_EQ(json_ok.exit_code, 0);
  EXPECT_EQ(json::parse(json_ok.out)["state"], "succeeded");
  EXPECT_EQ(Gpuctl({"train", "wait", "nosuch"}).exit_code, 1);
}

// Attempt 1 OOMs and fails; the agent relaunches it at 768 anchors, which
// succeeds. The wait ends with the job, not with its first attempt.
TEST_F(EverydayCommands, WaitWaitsThroughAnOomRelaunch) {
  StartTrainAgent();
  RunResult started = Gpuctl({"train", "start", "--name", "recovers", "--on-oom", "recover", "--anchors", "1024",
                              "--", "python3", ToyTrain(), "--steps", "6", "--interval", "0.05",
                              "--simulate-oom-at", "3", "--oom-above-anchors", "768"});
  ASSERT_EQ(started.exit_code, 0) << started.err;
  RunResult waited = Gpuctl({"-o", "json", "train", "wait", "recovers", "--timeout", "60s"});
  EXPECT_EQ(waited.exit_code, 0) << waited.err << waited.out;
  json job = json::parse(waited.out);
  EXPECT_EQ(job["state"], "succeeded");
  EXPECT_EQ(job["anchors"], 768);
  ASSERT_EQ(job["attempts"].size(), 1u) << job.dump(2);
  EXPECT_EQ(job["attempts"][0]["state"], "failed");
}

TEST_F(EverydayCommands, ListByStateThenRemoveEveryEndedJob) {
  ASSERT_NO_FATAL_FAILURE(StartThree());
  ASSERT_EQ(Gpuctl({"train", "wait", "ok"}).exit_code, 0);
  ASSERT_EQ(Gpuctl({"train", "wait", "bad"}).exit_code, 1);
  RunResult failed = Gpuctl({"-o", "json", "train", "list", "--state", "failed"});
  ASSERT_EQ(failed.exit_code, 0) << failed.err;
  EXPECT_EQ(Names(json::parse(failed.out)), std::vector<std::string>{"bad"});
  RunResult ended = Gpuctl({"-o", "json", "train", "list", "--state", "succeeded,failed"});
  EXPECT_EQ(Names(json::parse(ended.out)), (std::vector<std::string>{"ok", "bad"}));
  RunResult text = Gpuctl({"train", "list", "--state", "running"});
  EXPECT_NE(text.out.find("long"), std::string::npos);
  EXPECT_EQ(text.out.find("bad"), std::string::npos) << text.out;
  RunResult unknown = Gpuctl({"train", "list", "--state", "done"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("valid: queued, starting, running"), std::string::npos) << unknown.err;
  RunResult top = Gpuctl({"-o", "json", "top", "--once", "--state", "running"});
  ASSERT_EQ(top.exit_code, 0) << top.err;
  EXPECT_EQ(Names(json::parse(top.out)["nodes"][0]), std::vector<std::string>{"long"});

  RunResult removed = Gpuctl({"-o", "json", "train", "rm", "--ended"});
  ASSERT_EQ(removed.exit_code, 0) << removed.err;
  json gone = json::parse(removed.out);
  ASSERT_EQ(gone["removed"].size(), 2u) << gone.dump();
  EXPECT_EQ(gone["removed"][0]["name"], "ok");
  EXPECT_EQ(gone["removed"][1]["name"], "bad");
  EXPECT_EQ(gone["removed"][1]["state"], "failed");
  EXPECT_EQ(Names(json::parse(Gpuctl({"-o", "json", "train", "list"}).out)), std::vector<std::string>{"long"});
  RunResult again = Gpuctl({"train", "rm", "--ended"});
  EXPECT_EQ(again.exit_code, 0);
  EXPECT_EQ(again.out, "no ended jobs to remove\n");
  EXPECT_EQ(Gpuctl({"train", "rm", "long", "--ended"}).exit_code, 2);
}

TEST_F(EverydayCommands, ListWatchPrintsListingAfterListing) {
  ASSERT_NO_FATAL_FAILURE(StartThree());
  // Not a terminal: one JSON object per listing, until the reader goes.
  RunResult watched = RunProgram({"sh", "-c",
                                  "'" + BinaryPath("gpuctl") + "' --agent " + address_ +
                                      " -o json train list --watch --interval 200ms --state running | head -n 2"});
  ASSERT_EQ(watched.exit_code, 0) << watched.err;
  std::vector<json> listings = JsonLines(watched.out);
  ASSERT_EQ(listings.size(), 2u) << watched.out;
  for (const json& listing : listings) EXPECT_EQ(Names(listing), std::vector<std::string>{"long"});
}

TEST_F(EverydayCommands, EventsOfOneJobAndSomeKinds) {
  ASSERT_NO_FATAL_FAILURE(StartThree());
  ASSERT_EQ(Gpuctl({"train", "wait", "bad"}).exit_code, 1);
  ASSERT_EQ(Gpuctl({"train", "wait", "ok"}).exit_code, 0);
  RunResult all = Gpuctl({"-o", "json", "events"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  RunResult some = Gpuctl({"-o", "json", "events", "--job", "bad", "--kind", "job_ended,job_started"});
  ASSERT_EQ(some.exit_code, 0) << some.err;
  std::vector<json> events = JsonLines(some.out);
  ASSERT_EQ(events.size(), 2u) << some.out;
  EXPECT_EQ(events[0]["kind"], "job_started");
  EXPECT_EQ(events[1]["kind"], "job_ended");
  for (const json& e : events) EXPECT_EQ(e["job"], "bad");
  EXPECT_GT(JsonLines(all.out).size(), events.size());
  // --after still applies: after the first, only the second.
  RunResult after = Gpuctl({"-o", "json", "events", "--job", "bad", "--kind", "job_ended,job_started", "--after",
                            std::to_string(events[0]["seq"].get<uint64_t>())});
  EXPECT_EQ(JsonLines(after.out).size(), 1u) << after.out;
}

TEST_F(EverydayCommands, AttachPutsATerminalOnTheJobsSessionInTheAgentsTmuxServer) {
  if (RunProgram({"sh", "-c", "command -v script"}).exit_code != 0) GTEST_SKIP() << "no script(1) for a terminal";
  ASSERT_NO_FATAL_FAILURE(StartThree());
  // script(1) gives attach a terminal; its stdin stays open (sleep) so it
  // stays attached until killed.
  BackgroundProcess attached(
      {"sh", "-c",
       "sleep 60 | env -u TMUX script -qc \"'" + BinaryPath("gpuctl") + "' --agent " + address_ +
           " train attach long\" /dev/null >/dev/null"},
      dir_.path() + "/attach.err");
  bool seen = WaitUntil(
      [&] {
        RunResult clients = RunProgram({"tmux", "-L", tmux_socket_, "list-clients", "-F", "#{client_session}"});
        return clients.out.find("gpuctl-long") != std::string::npos;
      },
      std::chrono::seconds(20));
  EXPECT_TRUE(seen) << ReadFile(dir_.path() + "/attach.err");
  // Its group (sh, sleep, script); the tmux client on script's terminal gets its hangup.
  ::kill(-attached.pid(), SIGKILL);
  // An ended job has no session: usage error, saying where its log is.
  ASSERT_EQ(Gpuctl({"train", "wait", "ok"}).exit_code, 0);
  RunResult ended = Gpuctl({"train", "attach", "ok"});
  EXPECT_EQ(ended.exit_code, 2);
  EXPECT_NE(ended.err.find("gpuctl train logs ok"), std::string::npos) << ended.err;
}

TEST_F(EverydayCommands, BashCompletionAsksTheAgentForJobNames) {
  ASSERT_NO_FATAL_FAILURE(StartThree());
  RunResult script = Gpuctl({"completion", "bash"});
  ASSERT_EQ(script.exit_code, 0);
  std::string path = dir_.path() + "/gpuctl.bash";
  {
    std::ofstream(path) << script.out;
  }
  auto complete = [&](const std::string& words, int cword) {
    return RunProgram({"bash", "-c",
                       "source " + path + "; COMP_WORDS=(" + words + "); COMP_CWORD=" + std::to_string(cword) +
                           "; _gpuctl; echo \"${COMPREPLY[*]}\""})
        .out;
  };
  std::string gpuctl = "'" + BinaryPath("gpuctl") + "' --agent '" + address_ + "'";
  EXPECT_EQ(complete(gpuctl + " train logs l", 5), "long\n");
  std::string all = complete(gpuctl + " train wait ''", 5);
  for (const char* name : {"ok", "bad", "long"}) EXPECT_NE(all.find(name), std::string::npos) << all;
  EXPECT_EQ(complete(gpuctl + " train stop --gr", 5), "--grace\n");  // flags still, after a dash
}

TEST_F(EverydayCommands, HealthCountWithoutWatchPrintsThatMany) {
  StartAgent();
  RunResult r = Gpuctl({"-o", "json", "health", "--count", "3", "--interval", "100ms"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(JsonLines(r.out).size(), 3u) << r.out;
}

}  // namespace
}  // namespace gpuctl::testing
