#include "agents/build/peak_history.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "agents/sys/files.h"

namespace gpuctl::build {
namespace {
constexpr size_t kMaxFileBytes = 16u << 20;
constexpr uint64_t kCurveUnit = uint64_t{1} << 20;  // MiB on disk

// [pass step, [MiB per step]]: none when malformed or too long.
CompileCurve ParseHistoryCurve(const nlohmann::json& pass, const nlohmann::json& steps) {
  CompileCurve curve;
  if (!pass.is_number_integer() || !steps.is_array() || steps.size() > kMaxCurveSteps) return curve;
  const int64_t step = pass.get<int64_t>();
  if (step < 0 || static_cast<size_t>(step) >= steps.size()) return curve;
  for (const nlohmann::json& mib : steps) {
    if (!mib.is_number_unsigned() || mib.get<uint64_t>() > (uint64_t{1} << 30)) return {};
    curve.steps.push_back(mib.get<uint64_t>() * kCurveUnit);
  }
  curve.peak_passed_step = static_cast<int32_t>(step);
  curve.ended = true;
  return curve;
}

}  // namespace

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
    // [source, bytes] from before running times were kept, [source, bytes,
    // seconds], or [source, bytes, seconds, pass step, [MiB per step]].
    if (!row.is_array() || row.size() < 2 || row.size() > 5 || !row[0].is_string() || !row[1].is_number_unsigned()) {
      continue;
    }
    double seconds = row.size() == 3 && row[2].is_number() ? row[2].get<double>() : 0;
    if (!(seconds >= 0 && seconds < 1e9)) seconds = 0;
    CompileCurve curve = row.size() == 5 ? ParseHistoryCurve(row[3], row[4]) : CompileCurve{};
    history.entries_[row[0].get<std::string>()] = {row[1].get<uint64_t>(), history.next_seq_++, seconds, curve};
  }
  return history;
}

std::string PeakHistory::Serialize() const {
  // Oldest first, so a reload keeps the order of age.
  std::vector<std::pair<std::string, Entry>> rows(entries_.begin(), entries_.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.seq < b.second.seq; });
  nlohmann::json peaks = nlohmann::json::array();
  const size_t curves_from = rows.size() > kMaxCurveHistory ? rows.size() - kMaxCurveHistory : 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& [source, entry] = rows[i];
    nlohmann::json row = {source, entry.peak_bytes, entry.seconds};
    if (i >= curves_from && !entry.curve.steps.empty()) {
      nlohmann::json steps = nlohmann::json::array();
      for (uint64_t bytes : entry.curve.steps) steps.push_back((bytes + kCurveUnit - 1) / kCurveUnit);
      row.push_back(entry.curve.peak_passed_step);
      row.push_back(std::move(steps));
    }
    peaks.push_back(std::move(row));
  }
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

std::map<std::string, CompileCurve> PeakHistory::Curves() const {
  std::map<std::string, CompileCurve> curves;
  for (const auto& [source, entry] : entries_) {
    if (!entry.curve.steps.empty()) curves[source] = entry.curve;
  }
  return curves;
}

void PeakHistory::Record(const std::vector<FinishedCompile>& finished) {
  for (const FinishedCompile& compile : finished) {
    if (compile.source.empty() || compile.peak_bytes == 0) continue;
    // The highest seen: a compile killed part-way (a stopped build) shows
    // less than it needs, and must not lower what a rebuild is promised.
    Entry& entry = entries_[compile.source];
    const CompileCurve& curve = compile.curve;
    const bool keep_curve = curve.ended && curve.peak_passed_step >= 0 && curve.steps.size() <= kMaxCurveSteps &&
                            curve.steps.size() >= entry.curve.steps.size();
    entry = {std::max(entry.peak_bytes, compile.peak_bytes), next_seq_++, std::max(entry.seconds, compile.run_seconds),
             keep_curve ? curve : entry.curve};
  }
  while (entries_.size() > kMaxPeakHistory) {
    auto oldest = std::min_element(entries_.begin(), entries_.end(),
                                   [](const auto& a, const auto& b) { return a.second.seq < b.second.seq; });
    entries_.erase(oldest);
  }
}

}  // namespace gpuctl::build
