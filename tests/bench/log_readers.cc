#include "tests/bench/log_readers.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>

#include "tests/bench/log_stream_writer.h"

namespace gpuctl::bench {

void Arrivals::Feed(std::string_view data, int64_t now_ns) {
  if (stamped_) {
    partial_.append(data);
    size_t start = 0;
    for (size_t nl = partial_.find('\n'); nl != std::string::npos; nl = partial_.find('\n', start)) {
      std::optional<int64_t> written = ParseStamp(std::string_view(partial_).substr(start, nl - start));
      if (written) latency_ms_.push_back(static_cast<double>(now_ns - *written) / 1e6);
      start = nl + 1;
    }
    partial_.erase(0, start);
  }
  if (first_ns_.load() == 0) {
    first_bytes_ = data.size();
    first_ns_ = now_ns;
  }
  uint64_t total = bytes_.fetch_add(data.size()) + data.size();
  if (total >= expect_ && complete_ns_.load() == 0) complete_ns_ = now_ns;
}

bool Arrivals::ready() const { return bytes() >= kReadyLine.size(); }

namespace {

class StreamLogsReader final : public LogReader {
 public:
  StreamLogsReader(v1::Agent::Stub& stub, const std::string& job, Arrivals& arrivals) : LogReader(arrivals) {
    v1::StreamLogsRequest request;
    request.set_name(job);
    request.set_follow(true);
    reader_ = stub.StreamLogs(&ctx_, request);
    thread_ = std::thread([this] {
      v1::LogChunk chunk;
      while (reader_->Read(&chunk)) {
        arrivals_.Feed(chunk.data(), MonotonicNs());
        if (arrivals_.complete()) ctx_.TryCancel();
      }
    });
  }
  ~StreamLogsReader() override {
    Stop();
    Finish();
  }

  void Stop() override { ctx_.TryCancel(); }

  std::string Finish() override {
    if (!thread_.joinable()) return result_;
    thread_.join();
    grpc::Status status = reader_->Finish();
    if (status.ok()) {
      result_ = "stream ended";
    } else if (status.error_code() == grpc::StatusCode::CANCELLED && arrivals_.complete()) {
      result_ = "cancelled after the last byte";
    } else {
      result_ = "stream: " + status.error_message();
    }
    return result_;
  }

 private:
  grpc::ClientContext ctx_;
  std::unique_ptr<grpc::ClientReader<v1::LogChunk>> reader_;
  std::thread thread_;
  std::string result_;
};

class PipeReader final : public LogReader {
 public:
  PipeReader(const std::vector<std::string>& argv, Arrivals& arrivals) : LogReader(arrivals) {
    std::vector<std::string> args = argv;
    std::vector<char*> cargv;
    for (std::string& a : args) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
    pid_t parent = getpid();
    pid_ = fork();
    if (pid_ < 0) {
      close(fds[0]);
      close(fds[1]);
      throw std::runtime_error("fork failed for " + argv.front());
    }
    if (pid_ == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(127);
      dup2(fds[1], STDOUT_FILENO);
      execvp(cargv[0], cargv.data());
      _exit(127);
    }
    close(fds[1]);
    fd_ = fds[0];
    thread_ = std::thread([this] {
      std::string buf(256 * 1024, '\0');
      for (;;) {
        ssize_t n = read(fd_, buf.data(), buf.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        arrivals_.Feed(std::string_view(buf.data(), static_cast<size_t>(n)), MonotonicNs());
        if (arrivals_.complete()) break;
      }
      kill(pid_, SIGTERM);
    });
  }
  ~PipeReader() override {
    Stop();
    Finish();
  }

  // The child is reaped only in Finish, after the thread: the pid stays ours.
  void Stop() override {
    if (!reaped_) kill(pid_, SIGTERM);
  }

  std::string Finish() override {
    if (reaped_) return result_;
    thread_.join();
    int status = 0;
    waitpid(pid_, &status, 0);
    reaped_ = true;
    close(fd_);
    if (WIFEXITED(status)) result_ = "exit " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) result_ = WTERMSIG(status) == SIGTERM ? "stopped" : "signal " + std::to_string(WTERMSIG(status));
    return result_;
  }

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
  bool reaped_ = false;
  std::thread thread_;
  std::string result_;
};

}  // namespace

std::unique_ptr<LogReader> StartStreamLogsReader(v1::Agent::Stub& stub, const std::string& job, Arrivals& arrivals) {
  return std::make_unique<StreamLogsReader>(stub, job, arrivals);
}

std::unique_ptr<LogReader> StartPipeReader(const std::vector<std::string>& argv, Arrivals& arrivals) {
  return std::make_unique<PipeReader>(argv, arrivals);
}

}  // namespace gpuctl::bench
