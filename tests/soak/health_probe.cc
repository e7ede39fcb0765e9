// The soak's latency probe: GetHealth on one channel every INTERVAL_MS until
// STOP_FILE exists, then one line of figures: "ok N failed M p50 P p99 Q max
// R" (milliseconds, successful calls only; a call the agent could not answer
// because the soak had just killed or stopped it fails or is a lone outlier).
//   soak_health_probe SOCKET INTERVAL_MS STOP_FILE
#include <grpcpp/grpcpp.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "gpuctl/v1/agent.grpc.pb.h"

int main(int argc, char** argv) {
  if (argc != 4 || std::atoi(argv[2]) <= 0) {
    std::fprintf(stderr, "usage: soak_health_probe SOCKET INTERVAL_MS STOP_FILE\n");
    return 2;
  }
  const std::string target = std::string("unix:") + argv[1];
  const auto interval = std::chrono::milliseconds(std::atoi(argv[2]));
  const std::string stop = argv[3];
  auto stub = gpuctl::v1::Agent::NewStub(grpc::CreateChannel(target, grpc::InsecureChannelCredentials()));
  std::vector<double> took;
  long failed = 0;
  struct stat st {};
  while (::stat(stop.c_str(), &st) != 0) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
    gpuctl::v1::HealthSnapshot snapshot;
    auto start = std::chrono::steady_clock::now();
    grpc::Status status = stub->GetHealth(&context, gpuctl::v1::GetHealthRequest(), &snapshot);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (status.ok()) {
      took.push_back(ms);
    } else {
      ++failed;
    }
    std::this_thread::sleep_for(interval);
  }
  std::sort(took.begin(), took.end());
  auto at = [&](double q) { return took.empty() ? 0.0 : took[static_cast<size_t>(q * static_cast<double>(took.size() - 1))]; };
  std::printf("ok %zu failed %ld p50 %.2f p99 %.2f max %.2f\n", took.size(), failed, at(0.5), at(0.99),
              took.empty() ? 0.0 : took.back());
  return 0;
}
