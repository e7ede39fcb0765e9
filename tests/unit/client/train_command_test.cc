// `gpuctl train` end to end through RunCli against an in-process fake agent
// on a unix socket: what reaches the wire, what is printed, which exit code.
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <mutex>
#include <sstream>
#include <thread>

#include <grpcpp/grpcpp.h>
#include <nlohmann/json.hpp>

#include "agents/sys/boot_id.h"
#include "client/cli.h"
#include "client/exit_codes.h"
#include "gpuctl/v1/agent.grpc.pb.h"
#include "tests/fakes/temp_dir.h"
#include "tests/unit/client/cli_run.h"
#include "tests/unit/client/in_process_agent.h"

namespace gpuctl::client {
namespace {

v1::Job SampleJob(const std::string& name) {
  v1::Job job;
  job.mutable_spec()->set_name(name);
  job.mutable_spec()->add_command("python3");
  job.set_state(v1::JOB_STATE_RUNNING);
  job.set_pid(4242);
  job.set_pgid(4242);
  job.set_tmux_session("gpuctl-" + name);
  job.set_started_unix_ms(1764530000000);
  return job;
}

// Answers from what the test set; records what it was asked.
class FakeAgent final : public v1::Agent::Service {
 public:
  grpc::Status StartJob(grpc::ServerContext*, const v1::StartJobRequest* request, v1::Job* job) override {
    std::lock_guard lock(mutex_);
    starts.push_back(*request);
    if (!reply.ok()) return reply;
    *job = SampleJob(request->spec().name());
    return grpc::Status::OK;
  }
  grpc::Status GetJob(grpc::ServerContext*, const v1::GetJobRequest* request, v1::Job* job) override {
    std::lock_guard lock(mutex_);
    if (!reply.ok()) return reply;
    *job = SampleJob(request->name());
    return grpc::Status::OK;
  }
  grpc::Status ListJobs(grpc::ServerContext*, const v1::ListJobsRequest*, v1::ListJobsResponse* list) override {
    *list->add_jobs() = SampleJob("a");
    *list->add_jobs() = SampleJob("b");
    return grpc::Status::OK;
  }
  grpc::Status StopJob(grpc::ServerContext*, const v1::StopJobRequest* request, v1::Job* job) override {
    std::lock_guard lock(mutex_);
    stops.push_back(*request);
    *job = SampleJob(request->name());
    job->set_state(v1::JOB_STATE_STOPPED);
    job->set_term_signal(15);
    job->set_ended_unix_ms(job->started_unix_ms() + 65'000);
    return grpc::Status::OK;
  }
  // Sends `log` from a little before the offset asked for (an overlap the
  // client must trim), in 5-byte chunks; then ends, or with hold_open waits
  // to be cancelled, as a follow stream of a running job does.
  grpc::Status StreamLogs(grpc::ServerContext* context, const v1::StreamLogsRequest* request,
                          grpc::ServerWriter<v1::LogChunk>* writer) override {
    {
      std::lock_guard lock(mutex_);
      streams.push_back(*request);
    }
    uint64_t offset = request->from_offset() > 3 ? request->from_offset() - 3 : 0;
    if (request->has_tail_lines() && request->tail_lines() == 0) offset = log.size();  // as the agent does
    while (offset < log.size()) {
      v1::LogChunk chunk;
      chunk.set_offset(offset);
      chunk.set_data(log.substr(offset, 5));
      if (!writer->Write(chunk)) return grpc::Status::CANCELLED;
      offset += chunk.data().size();
    }
    while (hold_open && !context->IsCancelled()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return context->IsCancelled() ? grpc::Status::CANCELLED : grpc::Status::OK;
  }

  size_t stream_count() {
    std::lock_guard lock(mutex_);
    return streams.size();
  }

  std::mutex mutex_;
  grpc::Status reply = grpc::Status::OK;
  std::string log;
  std::atomic<bool> hold_open{false};
  std::vector<v1::StartJobRequest> starts;
  std::vector<v1::StopJobRequest> stops;
  std::vector<v1::StreamLogsRequest> streams;
};

using FakeAgentServer = InProcessAgentServer;

class TrainCommandTest : public ::testing::Test {
 protected:
  TrainCommandTest() : address_("unix:" + dir_.path() + "/agent.sock"), server_(address_, agent_) {}

  CliRun Gpuctl(std::vector<std::string> args) { return RunGpuctlAt(address_, std::move(args)); }

  testing::TempDir dir_;
  std::string address_;
  FakeAgent agent_;
  FakeAgentServer server_;
};

TEST_F(TrainCommandTest, StartSendsTheCommandVerbatim) {
  ASSERT_TRUE(server_.started());
  CliRun r = Gpuctl({"train", "start", "--name", "dflash-768", "--anchors", "768", "--env", "A=1", "--", "python3",
                     "train.py", "--max-anchors", "1024", "--name", "x", "--"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  ASSERT_EQ(agent_.starts.size(), 1u);
  const v1::JobSpec& spec = agent_.starts[0].spec();
  EXPECT_EQ(std::vector<std::string>(spec.command().begin(), spec.command().end()),
            (std::vector<std::string>{"python3", "train.py", "--max-anchors", "1024", "--name", "x", "--"}));
  EXPECT_EQ(spec.name(), "dflash-768");
  EXPECT_EQ(spec.anchors(), 768u);
  EXPECT_EQ(spec.env().at("A"), "1");
  EXPECT_EQ(spec.cwd(), std::filesystem::current_path().string());
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')), "started job dflash-768 (pid 4242, tmux session gpuctl-dflash-768)");
  EXPECT_NE(r.out.find("follow its log: gpuctl --agent " + address_ + " train logs -f dflash-768\n"),
            std::string::npos)
      << r.out;
}

TEST_F(TrainCommandTest, RefusedStartsAreUsageErrors) {
  for (grpc::StatusCode code : {grpc::StatusCode::INVALID_ARGUMENT, grpc::StatusCode::ALREADY_EXISTS,
                                grpc::StatusCode::FAILED_PRECONDITION}) {
    agent_.reply = grpc::Status(code, "container 200 is stopped; start it with 'pct start 200'");
    CliRun r = Gpuctl({"train", "start", "--name", "job", "--", "python3"});
    EXPECT_EQ(r.code, kExitUsage) << code;
    EXPECT_NE(r.err.find("gpuctl: starting job job: container 200 is stopped"), std::string::npos) << r.err;
  }
}

TEST_F(TrainCommandTest, UnknownJobIsExit1) {
  agent_.reply = grpc::Status(grpc::StatusCode::NOT_FOUND, "no job 'nope'");
  CliRun r = Gpuctl({"train", "status", "nope"});
  EXPECT_EQ(r.code, kExitFailure);
  EXPECT_EQ(r.err, "gpuctl: no job 'nope'\n");
}

TEST_F(TrainCommandTest, JsonOutputs) {
  CliRun one = Gpuctl({"-o", "json", "train", "status", "job"});
  ASSERT_EQ(one.code, kExitOk) << one.err;
  nlohmann::json j = nlohmann::json::parse(one.out);
  EXPECT_EQ(j["name"], "job");
  EXPECT_EQ(j["state"], "running");
  CliRun list = Gpuctl({"-o", "json", "train", "list"});
  ASSERT_EQ(list.code, kExitOk) << list.err;
  nlohmann::json l = nlohmann::json::parse(list.out);
  ASSERT_EQ(l["jobs"].size(), 2u);
  EXPECT_EQ(l["jobs"][1]["name"], "b");
  // status without NAME is list.
  EXPECT_EQ(Gpuctl({"-o", "json", "train", "status"}).out.substr(0, 9), R"({"jobs":[)");
}

TEST_F(TrainCommandTest, StopPassesTheGraceAndPrintsTheEnd) {
  CliRun r = Gpuctl({"train", "stop", "job", "--grace", "1m30s"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.out, "job job: stopped (SIGTERM) after 1m05s\n");
  EXPECT_EQ(Gpuctl({"train", "stop", "job"}).code, kExitOk);
  EXPECT_EQ(Gpuctl({"train", "stop", "job", "--grace", "0"}).code, kExitOk);
  ASSERT_EQ(agent_.stops.size(), 3u);
  EXPECT_EQ(agent_.stops[0].grace_ms(), 90'000u);
  EXPECT_EQ(agent_.stops[1].grace_ms(), 10'000u);
  EXPECT_EQ(agent_.stops[2].grace_ms(), 1u);  // 0 on the wire would mean the default
}

TEST_F(TrainCommandTest, LogsAreWrittenRawFromTheOffsetAsked) {
  agent_.log = std::string("line 1\n\0binary\xff\n", 16) + "line 3\n";
  CliRun all = Gpuctl({"train", "logs", "job"});
  ASSERT_EQ(all.code, kExitOk) << all.err;
  EXPECT_EQ(all.out, agent_.log);
  // The fake re-sends 3 bytes before the offset; the client trims them.
  CliRun from = Gpuctl({"train", "logs", "job", "--from-offset", "7"});
  ASSERT_EQ(from.code, kExitOk) << from.err;
  EXPECT_EQ(from.out, agent_.log.substr(7));
  EXPECT_EQ(agent_.streams.back().from_offset(), 7u);
  EXPECT_FALSE(agent_.streams.back().follow());
  EXPECT_EQ(Gpuctl({"train", "logs", "job", "--tail", "2"}).code, kExitOk);
  EXPECT_EQ(agent_.streams.back().tail_lines(), 2u);
  // --tail 0 reaches the wire as a count (nothing before the end), not as "no tail".
  CliRun none = Gpuctl({"train", "logs", "job", "--tail", "0"});
  ASSERT_EQ(none.code, kExitOk) << none.err;
  EXPECT_EQ(none.out, "");
  ASSERT_TRUE(agent_.streams.back().has_tail_lines());
  EXPECT_EQ(agent_.streams.back().tail_lines(), 0u);
  EXPECT_EQ(agent_.streams.back().from_offset(), 0u);
  EXPECT_EQ(Gpuctl({"train", "logs", "job"}).out, agent_.log);
  EXPECT_FALSE(agent_.streams.back().has_tail_lines());
  // Over a unix socket the client offers to read the log itself.
  ASSERT_FALSE(sys::BootId().empty());
  EXPECT_EQ(agent_.streams.back().local_boot_id(), sys::BootId());
}

TEST_F(TrainCommandTest, FollowSurvivesAnAgentRestart) {
  agent_.log = "step 1\nstep 2\n";
  agent_.hold_open = true;
  CliRun run;
  std::thread client([&] { run = Gpuctl({"train", "logs", "-f", "job"}); });
  // Let the first agent serve what it has, then take it away.
  for (int i = 0; i < 200 && agent_.stream_count() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  server_.Stop();
  std::this_thread::sleep_for(std::chrono::milliseconds(700));  // the client retries meanwhile
  FakeAgent restarted;
  restarted.log = "step 1\nstep 2\nstep 3\ndone\n";  // the job wrote on meanwhile, then ended
  std::filesystem::remove(dir_.path() + "/agent.sock");
  FakeAgentServer again(address_, restarted);
  ASSERT_TRUE(again.started());
  client.join();
  EXPECT_EQ(run.code, kExitOk) << run.err;
  EXPECT_EQ(run.out, "step 1\nstep 2\nstep 3\ndone\n");  // nothing lost, nothing twice
  EXPECT_EQ(run.err, "gpuctl: lost the agent at " + address_ + ", reconnecting...\n");
  ASSERT_FALSE(restarted.streams.empty());
  EXPECT_EQ(restarted.streams.back().from_offset(), 14u);
  EXPECT_FALSE(restarted.streams.back().has_tail_lines());
  EXPECT_TRUE(restarted.streams.back().follow());
  EXPECT_EQ(restarted.streams.back().local_boot_id(), sys::BootId()) << "a reconnect withdrew the offer";
}

}  // namespace
}  // namespace gpuctl::client
