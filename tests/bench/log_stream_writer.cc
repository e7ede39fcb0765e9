#include "tests/bench/log_stream_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <string>
#include <thread>

namespace gpuctl::bench {
namespace {

constexpr size_t kBulkWriteBytes = 1024 * 1024;
constexpr auto kGoWait = std::chrono::seconds(60);

bool WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Prints the ready line, then polls for the go file every millisecond.
bool WaitForGo(const WriterFiles& files) {
  if (!WriteAll(STDOUT_FILENO, kReadyLine)) return false;
  auto deadline = std::chrono::steady_clock::now() + kGoWait;
  while (access(files.go_file.c_str(), F_OK) != 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      std::fprintf(stderr, "log_stream_bench writer: no go file %s within 60 s\n", files.go_file.c_str());
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

bool RecordDone(const WriterFiles& files) {
  std::string text = std::to_string(MonotonicNs()) + "\n";
  int fd = open(files.done_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  bool ok = WriteAll(fd, text);
  return close(fd) == 0 && ok;
}

}  // namespace

int64_t MonotonicNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int WriteBulk(uint64_t bytes, const WriterFiles& files) {
  std::string line = "log_stream_bench bulk line ";
  line.resize(kLineBytes - 1, '.');
  line += '\n';
  std::string block;
  while (block.size() < kBulkWriteBytes) block += line;
  if (!WaitForGo(files)) return 3;
  while (bytes > 0) {
    size_t n = bytes < block.size() ? static_cast<size_t>(bytes) : block.size();
    if (!WriteAll(STDOUT_FILENO, std::string_view(block).substr(0, n))) return 1;
    bytes -= n;
  }
  return RecordDone(files) ? 0 : 1;
}

int WriteStamped(int rate, std::chrono::milliseconds duration, const WriterFiles& files) {
  if (!WaitForGo(files)) return 3;
  const auto total = static_cast<int64_t>(rate) * duration.count() / 1000;
  const std::chrono::nanoseconds period = std::chrono::nanoseconds(std::chrono::seconds(1)) / rate;
  const auto start = std::chrono::steady_clock::now();
  char buf[kLineBytes + 1];
  for (int64_t seq = 0; seq < total; ++seq) {
    std::this_thread::sleep_until(start + period * seq);
    int n = std::snprintf(buf, sizeof buf, "stamp seq=%08lld t=%lld ", static_cast<long long>(seq),
                          static_cast<long long>(MonotonicNs()));
    if (n < 0 || static_cast<size_t>(n) >= kLineBytes) return 1;
    std::string text(buf, static_cast<size_t>(n));
    text.resize(kLineBytes - 1, '.');
    text += '\n';
    if (!WriteAll(STDOUT_FILENO, text)) return 1;
  }
  return RecordDone(files) ? 0 : 1;
}

int RunWriter(const std::vector<std::string>& args) {
  if (args.size() == 4 && args[0] == "--write-bulk") {
    return WriteBulk(std::stoull(args[1]), {args[2], args[3]});
  }
  if (args.size() == 5 && args[0] == "--write-stamped") {
    return WriteStamped(std::stoi(args[1]), std::chrono::milliseconds(std::stoll(args[2])), {args[3], args[4]});
  }
  std::fprintf(stderr, "usage: log_stream_bench --write-bulk BYTES GO DONE | --write-stamped RATE MS GO DONE\n");
  return 2;
}

std::optional<int64_t> ParseStamp(std::string_view line) {
  if (!line.starts_with("stamp ")) return std::nullopt;
  size_t at = line.find(" t=");
  if (at == std::string_view::npos) return std::nullopt;
  int64_t ns = 0;
  const char* first = line.data() + at + 3;
  auto [end, ec] = std::from_chars(first, line.data() + line.size(), ns);
  if (ec != std::errc() || end == first) return std::nullopt;
  return ns;
}

}  // namespace gpuctl::bench
