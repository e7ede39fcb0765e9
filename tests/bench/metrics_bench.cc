// /metrics against GetHealth and ListJobs on the same agent, in one run:
// latency (median and p99 over --runs calls, each HTTP scrape on a new
// connection as Prometheus' first scrape; gRPC on one channel) and size.
// run_metrics_bench.sh starts the agent with 8 fake-NVML GPUs and 50 jobs.
//   metrics_bench --agent unix:PATH --metrics HOST:PORT [--runs N]
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "gpuctl/v1/agent.grpc.pb.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Timing {
  double median_ms, p99_ms;
};

Timing Measure(int runs, const std::function<void()>& call) {
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    auto start = Clock::now();
    call();
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms[std::min(ms.size() - 1, ms.size() * 99 / 100)]};
}

// GET /metrics over a new TCP connection (HTTP/1.0: the server closes it).
std::string Scrape(const std::string& host, int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, host.c_str(), &addr.sin_addr);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    std::perror("connect");
    std::exit(1);
  }
  std::string request = "GET /metrics HTTP/1.0\r\nHost: " + host + "\r\n\r\n";
  if (::write(fd, request.data(), request.size()) != static_cast<ssize_t>(request.size())) std::exit(1);
  std::string response;
  char buf[65536];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) response.append(buf, static_cast<size_t>(n));
  ::close(fd);
  size_t body = response.find("\r\n\r\n");
  if (response.rfind("HTTP/1.", 0) != 0 || response.find(" 200 ") > 12 || body == std::string::npos) {
    std::fprintf(stderr, "bad response: %.200s\n", response.c_str());
    std::exit(1);
  }
  return response.substr(body + 4);
}

}  // namespace

int main(int argc, char** argv) {
  std::string agent, metrics;
  int runs = 200;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--agent") agent = argv[i + 1];
    else if (flag == "--metrics") metrics = argv[i + 1];
    else if (flag == "--runs") runs = std::atoi(argv[i + 1]);
  }
  size_t colon = metrics.rfind(':');
  if (agent.empty() || colon == std::string::npos || runs < 1) {
    std::fprintf(stderr, "usage: metrics_bench --agent unix:PATH --metrics HOST:PORT [--runs N]\n");
    return 2;
  }
  std::string host = metrics.substr(0, colon);
  int port = std::atoi(metrics.c_str() + colon + 1);
  auto stub = gpuctl::v1::Agent::NewStub(grpc::CreateChannel(agent, grpc::InsecureChannelCredentials()));

  gpuctl::v1::HealthSnapshot health;
  gpuctl::v1::ListJobsResponse jobs;
  auto get_health = [&] {
    grpc::ClientContext context;
    if (!stub->GetHealth(&context, {}, &health).ok()) std::exit(1);
  };
  auto list_jobs = [&] {
    grpc::ClientContext context;
    if (!stub->ListJobs(&context, {}, &jobs).ok()) std::exit(1);
  };
  std::string body;
  auto scrape = [&] { body = Scrape(host, port); };
  get_health();  // warm each path once
  list_jobs();
  scrape();
  Timing h = Measure(runs, get_health);
  Timing l = Measure(runs, list_jobs);
  Timing m = Measure(runs, scrape);
  size_t series = 0;
  for (size_t at = 0; (at = body.find('\n', at)) != std::string::npos; ++at) {
    if (at + 1 < body.size() && body[at + 1] != '#') ++series;
  }
  std::printf("GPUs %d, jobs %d, %d calls each\n", health.gpus_size(), jobs.jobs_size(), runs);
  std::printf("GetHealth: median %.2f ms, p99 %.2f ms, %zu bytes\n", h.median_ms, h.p99_ms, health.ByteSizeLong());
  std::printf("ListJobs:  median %.2f ms, p99 %.2f ms, %zu bytes\n", l.median_ms, l.p99_ms, jobs.ByteSizeLong());
  std::printf("/metrics:  median %.2f ms, p99 %.2f ms, %zu bytes, %zu series\n", m.median_ms, m.p99_ms, body.size(),
              series);
  std::printf("ratio: /metrics median = %.2fx GetHealth, %.2fx GetHealth + ListJobs (what it reads)\n",
              m.median_ms / h.median_ms, m.median_ms / (h.median_ms + l.median_ms));
  return 0;
}
