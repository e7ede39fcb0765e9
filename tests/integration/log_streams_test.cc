// Many `train logs -f` streams against the real gpuctld: they cost no
// thread each, are capped with a clear error, all end when the job ends,
// and give their slots back.
#include <grpcpp/grpcpp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "gpuctl/v1/agent.grpc.pb.h"
#include "tests/fakes/skip_policy.h"
#include "tests/integration/train_fixture.h"

namespace gpuctl::testing {
namespace {

using namespace std::chrono_literals;

// A field of /proc/PID/status ("Threads", "VmRSS"), as a number.
long StatusField(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
  }
  return -1;
}

// One follow stream driven on a shared completion queue.
struct Stream {
  grpc::ClientContext context;
  v1::LogChunk chunk;
  grpc::Status status;
  std::unique_ptr<grpc::ClientAsyncReader<v1::LogChunk>> reader;
  std::string received;
  bool finished = false;
};

enum Op : uintptr_t { kStarted = 0, kRead = 1, kFinished = 2 };
void* Tag(size_t index, Op op) { return reinterpret_cast<void*>(index << 2 | op); }

class Streams {
 public:
  Streams(v1::Agent::Stub& stub, const std::string& job, size_t count) : streams_(count) {
    v1::StreamLogsRequest request;
    request.set_name(job);
    request.set_follow(true);
    for (size_t i = 0; i < count; ++i) {
      Stream& s = streams_[i];
      s.context.set_deadline(std::chrono::system_clock::now() + 120s);
      s.reader = stub.PrepareAsyncStreamLogs(&s.context, request, &cq_);
      s.reader->StartCall(Tag(i, kStarted));
    }
  }
  ~Streams() {
    for (Stream& s : streams_) s.context.TryCancel();
    cq_.Shutdown();
    void* tag;
    bool ok;
    while (cq_.Next(&tag, &ok)) {
    }
  }

  // Handles completions until `done` holds or `timeout` passes.
  bool PumpUntil(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::system_clock::now() + timeout;
    while (!done()) {
      void* tag;
      bool ok;
      if (cq_.AsyncNext(&tag, &ok, deadline) != grpc::CompletionQueue::GOT_EVENT) return done();
      auto bits = reinterpret_cast<uintptr_t>(tag);
      Stream& s = streams_[bits >> 2];
      switch (static_cast<Op>(bits & 3)) {
        case kStarted:
        case kRead:
          if ((bits & 3) == kRead && ok) s.received += s.chunk.data();
          if (ok) {
            s.reader->Read(&s.chunk, Tag(bits >> 2, kRead));
          } else {
            s.reader->Finish(&s.status, Tag(bits >> 2, kFinished));
          }
          break;
        case kFinished:
          s.finished = true;
          break;
      }
    }
    return true;
  }

  size_t CountReceived(const std::string& text) const {
    size_t n = 0;
    for (const Stream& s : streams_) n += s.received == text;
    return n;
  }
  size_t CountFinished(grpc::StatusCode code) const {
    size_t n = 0;
    for (const Stream& s : streams_) n += s.finished && s.status.error_code() == code;
    return n;
  }
  const Stream& at(size_t i) const { return streams_[i]; }

 private:
  grpc::CompletionQueue cq_;
  std::vector<Stream> streams_;
};

class LogStreams : public TrainFixture {};

TEST_F(LogStreams, AThousandIdleFollowersCostNoThreadsAndEndWithTheJob) {
  constexpr size_t kFollowers = 1000;
  std::vector<std::string> flags = AgentFlags();
  flags.insert(flags.end(), {"--max-log-streams", std::to_string(kFollowers)});
  StartAgent(flags, AgentEnv());
  ASSERT_EQ(Gpuctl({"train", "start", "--name", "idle", "--", "sh", "-c", "echo hello; exec sleep 120"}).exit_code, 0);
  auto channel = grpc::CreateChannel(address_, grpc::InsecureChannelCredentials());
  auto stub = v1::Agent::NewStub(channel);
  const long threads_before = StatusField(agent_->pid(), "Threads");

  Streams followers(*stub, "idle", kFollowers);
  ASSERT_TRUE(followers.PumpUntil([&] { return followers.CountReceived("hello\n") == kFollowers; }, 60s))
      << followers.CountReceived("hello\n") << " of " << kFollowers << " followers got the log";
  const long threads_with = StatusField(agent_->pid(), "Threads");
  EXPECT_LE(threads_with, threads_before + 8) << "threads grew from " << threads_before << " to " << threads_with;

  // One more is refused with the reason, not queued or served.
  Streams extra(*stub, "idle", 1);
  ASSERT_TRUE(extra.PumpUntil([&] { return extra.at(0).finished; }, 10s));
  EXPECT_EQ(extra.at(0).status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(extra.at(0).status.error_message().find("--max-log-streams"), std::string::npos)
      << extra.at(0).status.error_message();

  // The job ends: every follower ends, OK, with nothing more.
  ASSERT_EQ(Gpuctl({"train", "stop", "idle", "--grace", "1s"}).exit_code, 0);
  ASSERT_TRUE(followers.PumpUntil([&] { return followers.CountFinished(grpc::StatusCode::OK) == kFollowers; }, 60s))
      << followers.CountFinished(grpc::StatusCode::OK) << " of " << kFollowers << " ended OK";
  // Each got the whole log (the wrapper's shell adds a line as the job is stopped).
  const std::string log = ReadFile(StateDir() + "/jobs/idle/output.log");
  EXPECT_EQ(followers.CountReceived(log), kFollowers);

  // Their slots are free again.
  RunResult logs = Gpuctl({"train", "logs", "idle"});
  EXPECT_EQ(logs.exit_code, 0) << logs.err;
  EXPECT_EQ(logs.out, log);
}

TEST_F(LogStreams, AFifoInPlaceOfTheLogEndsTheStreamAndTheAgentStaysResponsive) {
  StartTrainAgent();
  ASSERT_EQ(Gpuctl({"train", "start", "--name", "fifo", "--", "sh", "-c", "exec sleep 120"}).exit_code, 0);
  const std::string log = StateDir() + "/jobs/fifo/output.log";
  ASSERT_TRUE(WaitUntil([&] { return ::access(log.c_str(), F_OK) == 0; }, 10s));
  ASSERT_EQ(::unlink(log.c_str()), 0);
  ASSERT_EQ(::mkfifo(log.c_str(), 0600), 0);
  RunResult logs = Gpuctl({"train", "logs", "-f", "fifo"});
  EXPECT_NE(logs.exit_code, 0);
  EXPECT_NE(logs.err.find("regular file"), std::string::npos) << logs.err;
  RunResult list = Gpuctl({"train", "list"});
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(Gpuctl({"train", "stop", "fifo", "--grace", "1s"}).exit_code, 0);
}

// The boot id of this kernel, as gpuctl sends it.
std::string ThisBootId() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id;
}

// On the agent's host `gpuctl train logs` is named ranges of the log and
// reads them itself; a client of another kernel gets the bytes; and a client
// that cannot read the file named (here: the job's directory hidden in its
// own mount namespace, as another user's log or a container's path would be)
// gets the whole log all the same, through the agent.
TEST_F(LogStreams, AClientOnTheAgentsHostReadsTheLogItselfAndAnyOtherIsSentIt) {
  StartTrainAgent();
  ASSERT_EQ(Gpuctl({"train", "start", "--name", "seq", "--", "seq", "1", "200000"}).exit_code, 0);
  ASSERT_EQ(Gpuctl({"train", "wait", "seq"}).exit_code, 0);
  const std::string job_dir = StateDir() + "/jobs/seq";
  const std::string log = ReadFile(job_dir + "/output.log");
  ASSERT_GT(log.size(), 1'000'000u);

  auto stub = v1::Agent::NewStub(grpc::CreateChannel(address_, grpc::InsecureChannelCredentials()));
  auto chunks_for = [&](const std::string& boot_id) {
    v1::StreamLogsRequest request;
    request.set_name("seq");
    request.set_local_boot_id(boot_id);
    grpc::ClientContext context;
    std::vector<v1::LogChunk> chunks;
    auto reader = stub->StreamLogs(&context, request);
    for (v1::LogChunk chunk; reader->Read(&chunk);) chunks.push_back(chunk);
    EXPECT_TRUE(reader->Finish().ok());
    return chunks;
  };
  struct stat st {};
  ASSERT_EQ(::stat((job_dir + "/output.log").c_str(), &st), 0);
  std::vector<v1::LogChunk> named = chunks_for(ThisBootId());
  ASSERT_EQ(named.size(), 1u) << "one range names the whole finished log";
  EXPECT_TRUE(named[0].data().empty());
  EXPECT_EQ(named[0].local().path(), job_dir + "/output.log");
  EXPECT_EQ(named[0].local().device(), static_cast<uint64_t>(st.st_dev));
  EXPECT_EQ(named[0].local().inode(), static_cast<uint64_t>(st.st_ino));
  EXPECT_EQ(named[0].local().length(), log.size());
  std::string sent;
  for (const v1::LogChunk& chunk : chunks_for("00000000-0000-0000-0000-000000000000")) {
    EXPECT_FALSE(chunk.has_local()) << "a range named to another host's client";
    sent += chunk.data();
  }
  EXPECT_TRUE(sent == log) << "another kernel's client got " << sent.size() << " of " << log.size() << " bytes";

  RunResult here = Gpuctl({"train", "logs", "seq"});
  EXPECT_EQ(here.exit_code, 0) << here.err;
  EXPECT_TRUE(here.out == log) << here.out.size() << " of " << log.size() << " bytes";

  if (::geteuid() != 0) GPUCTL_SKIP() << "hiding the job's directory needs a mount namespace (root)";
  if (RunProgram({"unshare", "--mount", "true"}).exit_code != 0) {
    GPUCTL_SKIP_ALLOWED(kPlatform) << "this machine makes no mount namespace (unshare --mount failed)";
  }
  RunResult hidden = RunProgram({"unshare", "--mount", "--propagation", "private", "sh", "-c",
                                 "mount -t tmpfs none \"$0\" && exec \"$@\"", job_dir, BinaryPath("gpuctl"),
                                 "--agent", address_, "train", "logs", "seq"});
  EXPECT_EQ(hidden.exit_code, 0) << hidden.err;
  EXPECT_TRUE(hidden.out == log) << hidden.out.size() << " of " << log.size() << " bytes; " << hidden.err;
  EXPECT_EQ(hidden.err, "") << "falling back to the agent is no news to the user";
}

}  // namespace
}  // namespace gpuctl::testing
