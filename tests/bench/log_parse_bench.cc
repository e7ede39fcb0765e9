// How fast a job's log is read into its record (events and metrics), per
// job, against `wc -l` reading the same file in the same run. The log is a
// realistic mix: plain step lines, Hugging Face dicts, tqdm bars redrawn
// with '\r', NCCL chatter, and a few tracebacks and CUDA OOMs from the real
// captures. Never fails on timing; prints the figures and the ratio.
//   log_parse_bench [MIB]   (default 300)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "agents/train/log_ingest.h"

namespace {

using Clock = std::chrono::steady_clock;

std::string Fixture(const std::string& name) {
  std::ifstream in(std::string(GPUCTL_FIXTURES_DIR) + "/" + name, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string MakeLog(uint64_t bytes) {
  const std::string oom = Fixture("oom-default.log");
  std::string out;
  out.reserve(bytes + 4096);
  uint64_t step = 0;
  while (out.size() < bytes) {
    ++step;
    switch (step % 8) {
      case 0: out += "step " + std::to_string(step) + " | loss 2.1043 | grad_norm 1.25 | lr 3.0e-04 | 13.8 Ktok/s\n"; break;
      case 1: out += "{'loss': 2.1043, 'grad_norm': 1.2, 'learning_rate': 4.5e-05, 'epoch': 0.12}\n"; break;
      case 2: out += " 45%|████▌     | 450/1000 [01:23<01:42,  5.37it/s]\r"; break;
      case 3: out += "node-3:12345:12400 [3] NCCL INFO Channel 02/0 : 3[3] -> 4[4] via P2P/IPC/read\n"; break;
      case 4: out += "[rank3]: epoch 1 batch " + std::to_string(step) + " tokens 65536 elapsed 0.47s\n"; break;
      case 5: out += "2026-12-01 12:00:00,123 - INFO - train.py:88 - saving checkpoint at step " + std::to_string(step) + "\n"; break;
      case 6: out += "Epoch 1:  12%|█▏        | 120/1000 [00:30<03:40, loss=2.1, v_num=0]\r"; break;
      default: out += "warmup: scheduler step " + std::to_string(step) + " of 10000\n"; break;
    }
    if (step % 200000 == 0) out += oom;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 300;
  if (mib == 0 || mib > 4096) {
    std::fprintf(stderr, "usage: log_parse_bench [MIB, 1-4096]\n");
    return 2;
  }
  std::string dir = std::filesystem::temp_directory_path() / ("log_parse_bench-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::string path = dir + "/output.log";
  {
    std::ofstream out(path, std::ios::binary);
    out << MakeLog(mib << 20);
  }
  uint64_t size = std::filesystem::file_size(path);
  // Warm the page cache for both readers.
  (void)std::system(("cat " + path + " > /dev/null").c_str());

  auto t0 = Clock::now();
  (void)std::system(("wc -l " + path + " > /dev/null").c_str());
  double wc_s = std::chrono::duration<double>(Clock::now() - t0).count();

  gpuctl::train::JobRecord record;
  record.spec.name = "bench";
  record.state = gpuctl::train::JobState::kRunning;
  record.log_path = path;
  gpuctl::train::LogIngest ingest;
  size_t events = 0;
  t0 = Clock::now();
  while (record.parsed_offset < size) {
    ingest.Ingest(record, 1 << 20, 0, [&](const gpuctl::train::JobRecord&, const gpuctl::train::LogEvent&) { ++events; });
    if (record.parsed_offset == 0) break;
  }
  double parse_s = std::chrono::duration<double>(Clock::now() - t0).count();
  double mb = static_cast<double>(size) / 1e6;
  std::printf("log_parse_bench: %.0f MB log, %zu events, last step %llu\n", mb, events,
              static_cast<unsigned long long>(record.metrics.step.value_or(0)));
  std::printf("  wc -l (baseline)      %7.3f s  %8.1f MB/s\n", wc_s, mb / wc_s);
  std::printf("  gpuctl log ingest     %7.3f s  %8.1f MB/s   %.1fx wc -l's time\n", parse_s, mb / parse_s,
              parse_s / wc_s);
  std::filesystem::remove_all(dir);
  return 0;
}
