#include "agents/provision/nvcc_memtrace.h"

#include <algorithm>
#include <charconv>
#include <optional>

namespace gpuctl::provision {
namespace {

std::vector<std::string_view> SplitFields(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  while (true) {
    size_t comma = line.find(',', start);
    fields.push_back(line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) return fields;
    start = comma + 1;
  }
}

template <typename T>
std::optional<T> ParseNumber(std::string_view text) {
  T value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::string_view TrimLine(std::string_view line) {
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
  return line;
}

}  // namespace

Result<std::vector<MemtraceRow>> ParseNvccMemtrace(std::string_view csv) {
  std::vector<MemtraceRow> rows;
  std::optional<std::vector<std::string_view>> header;
  size_t col_t = 0, col_job = 0, col_rss = 0, col_procs = 0, col_avail = 0;
  size_t line_no = 0;
  size_t pos = 0;
  while (pos < csv.size()) {
    size_t nl = csv.find('\n', pos);
    std::string_view line = TrimLine(csv.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos));
    pos = nl == std::string_view::npos ? csv.size() : nl + 1;
    ++line_no;
    if (line.empty()) continue;
    std::vector<std::string_view> fields = SplitFields(line);
    if (!header) {
      header = fields;
      auto column = [&](std::string_view name, size_t& index) {
        auto it = std::find(header->begin(), header->end(), name);
        if (it == header->end()) return false;
        index = static_cast<size_t>(it - header->begin());
        return true;
      };
      if (!column("t_s", col_t) || !column("job", col_job) || !column("rss_mib", col_rss) ||
          !column("procs", col_procs) || !column("mem_available_mib", col_avail)) {
        return InvalidArgument("nvcc memtrace: the header must name t_s, job, rss_mib, procs and "
                               "mem_available_mib; got '" + std::string(line) + "'");
      }
      continue;
    }
    if (fields.size() != header->size()) {
      return InvalidArgument("nvcc memtrace line " + std::to_string(line_no) + ": " +
                             std::to_string(fields.size()) + " fields, the header has " +
                             std::to_string(header->size()));
    }
    auto t = ParseNumber<double>(fields[col_t]);
    auto rss = ParseNumber<uint64_t>(fields[col_rss]);
    auto procs = ParseNumber<uint32_t>(fields[col_procs]);
    auto avail = ParseNumber<uint64_t>(fields[col_avail]);
    if (!t || !rss || !procs || !avail || fields[col_job].empty()) {
      return InvalidArgument("nvcc memtrace line " + std::to_string(line_no) + ": not a sample: '" +
                             std::string(line) + "'");
    }
    rows.push_back({.t_s = *t, .job = std::string(fields[col_job]), .rss_mib = *rss, .procs = *procs,
                    .mem_available_mib = *avail});
  }
  if (!header) return InvalidArgument("nvcc memtrace: empty (no header line)");
  return rows;
}

std::map<std::string, uint64_t> PeakRssMibByJob(const std::vector<MemtraceRow>& rows) {
  std::map<std::string, uint64_t> peaks;
  for (const MemtraceRow& row : rows) {
    uint64_t& peak = peaks[row.job];
    peak = std::max(peak, row.rss_mib);
  }
  return peaks;
}

}  // namespace gpuctl::provision
