#include "agents/build/peak_history.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "agents/sys/files.h"

namespace gpuctl::build {
namespace {
constexpr size_t kMaxFileBytes = 16u << 20;
}

Result<PeakHistory> PeakHistory::Load(const std::string& path) {
  if (!sys::PathExists(path)) return PeakHistory();
  auto text = sys::ReadRegularFile(path, kMaxFileBytes);
  if (!text.ok()) return text.status();
  return Parse(*text);
}

Result<PeakHistory> PeakHistory::Parse(std::string_view text) {
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("peaks") || !doc["peaks"].is_array()) {
    return InvalidArgument("the build peak history is not {\"peaks\": [[source, bytes, seconds], ...]}");
  }
  PeakHistory history;
  for (const nlohmann::json& row : doc["peaks"]) {
    // [source, bytes] from before running times were kept, or [source, bytes, seconds].
    if (!row.is_array() || row.size() < 2 || row.size() > 3 || !row[0].is_string() || !row[1].is_number_unsigned()) {
      continue;
    }
    double seconds = row.size() == 3 && row[2].is_number() ? row[2].get<double>() : 0;
    if (!(seconds >= 0 && seconds < 1e9)) seconds = 0;
    history.entries_[row[0].get<std::string>()] = {row[1].get<uint64_t>(), history.next_seq_++, seconds};
  }
  return history;
}

std::string PeakHistory::Serialize() const {
  // Oldest first, so a reload keeps the order of age.
  std::vector<std::pair<std::string, Entry>> rows(entries_.begin(), entries_.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.seq < b.second.seq; });
  nlohmann::json peaks = nlohmann::json::array();
  for (const auto& [source, entry] : rows) peaks.push_back({source, entry.peak_bytes, entry.seconds});
  // Sources are paths: any byte. Replace what is not UTF-8 rather than throw.
  return nlohmann::json{{"peaks", peaks}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

Status PeakHistory::Save(const std::string& path) const { return sys::WriteFileAtomic(path, Serialize(), 0644); }

std::map<std::string, uint64_t> PeakHistory::Peaks() const {
  std::map<std::string, uint64_t> peaks;
  for (const auto& [source, entry] : entries_) peaks[source] = entry.peak_bytes;
  return peaks;
}

std::map<std::string, double> PeakHistory::Seconds() const {
  std::map<std::string, double> seconds;
  for (const auto& [source, entry] : entries_) {
    if (entry.seconds > 0) seconds[source] = entry.seconds;
  }
  return seconds;
}

void PeakHistory::Record(const std::vector<FinishedCompile>& finished) {
  for (const FinishedCompile& compile : finished) {
    if (compile.source.empty() || compile.peak_bytes == 0) continue;
    // The highest seen: a compile killed part-way (a stopped build) shows
    // less than it needs, and must not lower what a rebuild is promised.
    Entry& entry = entries_[compile.source];
    entry = {std::max(entry.peak_bytes, compile.peak_bytes), next_seq_++, std::max(entry.seconds, compile.run_seconds)};
  }
  while (entries_.size() > kMaxPeakHistory) {
    auto oldest = std::min_element(entries_.begin(), entries_.end(),
                                   [](const auto& a, const auto& b) { return a.second.seq < b.second.seq; });
    entries_.erase(oldest);
  }
}

}  // namespace gpuctl::build
