// What a relaunch pays to find where to resume: FindLatestCompleteCheckpoint
// and SignatureOf (the hang watch's "is the checkpoint tree growing" sample)
// over a --checkpoint-dir of many Hugging Face checkpoints (checkpoint-N/
// with small shard files and trainer_state.json), a few partial ones (no
// trainer_state.json yet: the newest, as a crash leaves them) and a
// temporary one. Baseline, measured in the same run on the same tree: a
// plain std::filesystem::recursive_directory_iterator walk that lstat()s
// every entry, the least any scan that reads sizes and mtimes must do.
// Median of RUNS runs each, page cache warm (a first cold pass is not
// timed). Prints the figures and the ratios; never fails on timing.
//   build/tests/bench/checkpoint_scan_bench [--checkpoints N] [--files F] [--runs R]
//   (defaults 1000, 10, 11)
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <system_error>
#include <vector>

#include "agents/sys/checkpoint_scan.h"

namespace fs = std::filesystem;
using namespace gpuctl;

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kPartial = 3;        // the newest steps: shards written, no trainer_state.json
constexpr int kStepsPerSave = 500;  // checkpoint-500, checkpoint-1000, ...

struct Flags {
  int checkpoints = 1000;
  int files = 10;
  int runs = 11;
};

bool ParseInt(const char* text, int min, int max, int& out) {
  char* end = nullptr;
  long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < min || v > max) return false;
  out = static_cast<int>(v);
  return true;
}

bool ParseFlags(int argc, char** argv, Flags& flags) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) return false;
    const char* value = argv[++i];
    if (arg == "--checkpoints" && ParseInt(value, 1, 1'000'000, flags.checkpoints)) continue;
    if (arg == "--files" && ParseInt(value, 0, 10'000, flags.files)) continue;
    if (arg == "--runs" && ParseInt(value, 1, 10'000, flags.runs)) continue;
    return false;
  }
  return true;
}

void WriteFile(const fs::path& path, size_t bytes) {
  std::ofstream out(path, std::ios::binary);
  out << std::string(bytes, 'x');
}

// One HF checkpoint: F shard-like files (a few hundred bytes each: the scan
// only stats them) and, when complete, trainer_state.json written last.
void WriteCheckpoint(const fs::path& dir, int files, bool complete) {
  fs::create_directories(dir);
  static const char* const kNames[] = {"model.safetensors", "optimizer.pt", "scheduler.pt", "rng_state.pth",
                                       "config.json", "generation_config.json", "tokenizer.json",
                                       "tokenizer_config.json", "special_tokens_map.json", "training_args.bin"};
  for (int f = 0; f < files; ++f) {
    std::string file = kNames[f % 10];
    if (f >= 10) file = std::to_string(f / 10) + "-" + file;
    WriteFile(dir / file, 256 + 16 * static_cast<size_t>(f));
  }
  if (complete) {  // a whole JSON object, as the scan requires, of about 2 KiB
    std::ofstream(dir / "trainer_state.json") << "{\"log_history\": \"" << std::string(2030, 'x') << "\"}\n";
  }
}

struct WalkTotals {
  uint64_t entries = 0;
  uint64_t bytes = 0;
  int64_t newest_mtime_ns = 0;
};

// The baseline: every entry listed and lstat()ed once, nothing else.
WalkTotals PlainWalk(const std::string& root) {
  WalkTotals t;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(root, fs::directory_options::none, ec), end; !ec && it != end;
       it.increment(ec)) {
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0) continue;
    ++t.entries;
    if (S_ISREG(st.st_mode)) t.bytes += static_cast<uint64_t>(st.st_size);
    t.newest_mtime_ns = std::max(t.newest_mtime_ns, int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec);
  }
  return t;
}

// Median milliseconds of `runs` calls of `f`.
double MedianMs(int runs, const std::function<void()>& f) {
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    const auto start = Clock::now();
    f();
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  if (!ParseFlags(argc, argv, flags)) {
    std::fprintf(stderr, "usage: checkpoint_scan_bench [--checkpoints N] [--files F] [--runs R]\n");
    return 2;
  }
  const fs::path dir = fs::temp_directory_path() / ("checkpoint_scan_bench-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const int complete = flags.checkpoints;
  for (int i = 1; i <= complete + kPartial; ++i) {
    WriteCheckpoint(dir / ("checkpoint-" + std::to_string(i * kStepsPerSave)), flags.files, i <= complete);
  }
  // A save in progress under a temporary name (never a candidate to resume).
  WriteCheckpoint(dir / ("tmp-checkpoint-" + std::to_string((complete + kPartial + 1) * kStepsPerSave)), flags.files,
                  true);
  const std::string expected = (dir / ("checkpoint-" + std::to_string(complete * kStepsPerSave))).string();

  sys::CheckpointScanOptions opts;
  opts.dir = dir.string();
  opts.now_unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();

  // Warm the page cache and check each answers what it should.
  const WalkTotals totals = PlainWalk(dir.string());
  const std::optional<sys::Checkpoint> found = sys::FindLatestCompleteCheckpoint(opts);
  const sys::TreeSignature signature = sys::SignatureOf(dir.string());
  int rc = 0;
  if (!found || found->path != expected) {
    std::fprintf(stderr, "checkpoint_scan_bench: found %s, expected %s\n", found ? found->path.c_str() : "nothing",
                 expected.c_str());
    rc = 1;
  }
  if (signature.entries != totals.entries + 1 || signature.bytes != totals.bytes) {  // +1: the root itself
    std::fprintf(stderr, "checkpoint_scan_bench: SignatureOf saw %llu entries, %llu bytes; the walk %llu, %llu\n",
                 static_cast<unsigned long long>(signature.entries), static_cast<unsigned long long>(signature.bytes),
                 static_cast<unsigned long long>(totals.entries), static_cast<unsigned long long>(totals.bytes));
    rc = 1;
  }

  uint64_t sink = 0;  // keeps the calls from being optimised away
  const double walk_ms = MedianMs(flags.runs, [&] { sink += PlainWalk(dir.string()).entries; });
  const double find_ms = MedianMs(flags.runs, [&] { sink += sys::FindLatestCompleteCheckpoint(opts).has_value(); });
  const double sig_ms = MedianMs(flags.runs, [&] { sink += sys::SignatureOf(dir.string()).entries; });
  std::error_code ec;
  fs::remove_all(dir, ec);

  std::printf("checkpoint_scan_bench: %d complete HF checkpoints + %d partial + 1 temporary, %d files each "
              "(%llu entries), median of %d, page cache warm\n",
              complete, kPartial, flags.files, static_cast<unsigned long long>(totals.entries), flags.runs);
  std::printf("  baseline (recursive_directory_iterator + lstat each): %8.2f ms\n", walk_ms);
  std::printf("  FindLatestCompleteCheckpoint:                         %8.2f ms  ratio %.2f  (-> %s)\n", find_ms,
              walk_ms > 0 ? find_ms / walk_ms : 0.0, found ? fs::path(found->path).filename().c_str() : "none");
  std::printf("  SignatureOf:                                          %8.2f ms  ratio %.2f\n", sig_ms,
              walk_ms > 0 ? sig_ms / walk_ms : 0.0);
  if (sink == 0) std::printf("  (nothing seen)\n");
  return rc;
}
