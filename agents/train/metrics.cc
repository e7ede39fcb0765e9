#include "agents/train/metrics.h"

#include <algorithm>
#include <charconv>

#include "agents/train/metrics_scanner.h"

namespace gpuctl::train {
namespace {

std::optional<double> ToDouble(std::string_view text) {
  std::string digits;
  for (char c : text) {
    if (c != ',') digits += c;  // "1,234.5 tok/s"
  }
  std::string_view number = digits;
  if (number.starts_with('+')) number.remove_prefix(1);
  double value = 0;
  auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (number.empty() || ec != std::errc() || end != number.data() + number.size()) {
    return std::nullopt;
  }
  return value;
}

std::optional<uint64_t> ToWholeNumber(std::string_view text) {
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::string_view Group(const std::cmatch& match, size_t i) {
  if (i >= match.size() || !match[i].matched) return {};
  return {match[i].first, static_cast<size_t>(match[i].length())};
}

bool HasDigit(std::string_view line) {
  for (char c : line) {
    if (static_cast<unsigned char>(c - '0') <= 9) return true;
  }
  return false;
}

}  // namespace

Result<MetricsTracker> MetricsTracker::Create(const MetricsPatterns& patterns) {
  MetricsTracker tracker;
  if (patterns == MetricsPatterns{}) {
    tracker.builtin_ = true;
    return tracker;
  }
  struct Field {
    const char* name;
    const std::vector<MetricPattern>* patterns;
    std::vector<Compiled>* compiled;
    unsigned groups;
    const char* groups_needed;
  };
  const Field fields[] = {
      {"step", &patterns.step, &tracker.step_, 1, "the number in group 1"},
      {"loss", &patterns.loss, &tracker.loss_, 1, "the number in group 1"},
      {"grad_norm", &patterns.grad_norm, &tracker.grad_norm_, 1, "the number in group 1"},
      {"throughput", &patterns.throughput, &tracker.throughput_, 2,
       "the number in group 1 and the unit in group 2"},
  };
  std::vector<std::string> hints;  // distinct, in order of first use
  for (const Field& field : fields) {
    for (const MetricPattern& pattern : *field.patterns) {
      uint64_t hint_bits = 0;
      for (const std::string& hint : pattern.hints) {
        auto known = std::find(hints.begin(), hints.end(), hint);
        if (known == hints.end()) {
          if (hints.size() == LiteralScanner::kMaxLiterals) {
            return InvalidArgument("metric patterns have more than 64 distinct hints; "
                                   "share hints between patterns or drop some");
          }
          known = hints.insert(hints.end(), hint);
        }
        hint_bits |= uint64_t{1} << static_cast<unsigned>(known - hints.begin());
      }
      std::string what = std::string(field.name) + " pattern '" + pattern.regex + "'";
      try {
        std::regex regex(pattern.regex, std::regex::ECMAScript | std::regex::optimize);
        if (regex.mark_count() < field.groups) {
          return InvalidArgument(what + " must capture " + field.groups_needed +
                                 ", e.g. loss[=:] *([0-9.]+)");
        }
        field.compiled->push_back({std::move(regex), hint_bits});
      } catch (const std::regex_error& e) {
        return InvalidArgument(what + " is not a valid regular expression (" + e.what() +
                               "); use ECMAScript syntax, e.g. loss[=:] *([0-9.]+)");
      }
    }
  }
  tracker.scanner_ = LiteralScanner(hints);
  return tracker;
}

bool MetricsTracker::FirstMatch(const std::vector<Compiled>& patterns, std::string_view line,
                                uint64_t hints_present, std::cmatch& match) {
  for (const Compiled& p : patterns) {
    if (p.hint_bits != 0 && (p.hint_bits & hints_present) == 0) continue;
    if (std::regex_search(line.data(), line.data() + line.size(), match, p.regex)) return true;
  }
  return false;
}

void MetricsTracker::Observe(std::string_view line) {
  ++state_.lines_seen;
  line = line.substr(0, kMaxScannedBytes);
  if (!HasDigit(line)) return;  // every value read is a number
  if (builtin_) {
    MetricsReading r = ScanMetrics(line);
    bool any = r.step || r.loss || r.grad_norm || r.learning_rate || r.throughput;
    if (!any || LooksLikeErrorProse(line)) return;
    if (r.step) state_.step = r.step;
    if (r.loss) state_.loss = r.loss;
    if (r.grad_norm) state_.grad_norm = r.grad_norm;
    if (r.learning_rate) state_.learning_rate = r.learning_rate;
    if (r.throughput) UpdateThroughput(std::move(*r.throughput));
    return;
  }
  if (LooksLikeErrorProse(line)) return;
  const uint64_t hints = scanner_.Scan(line);
  std::cmatch match;
  if (FirstMatch(step_, line, hints, match)) {
    if (auto step = ToWholeNumber(Group(match, 1))) state_.step = step;
  }
  if (FirstMatch(loss_, line, hints, match)) {
    if (auto loss = ToDouble(Group(match, 1))) state_.loss = loss;
  }
  if (FirstMatch(grad_norm_, line, hints, match)) {
    if (auto norm = ToDouble(Group(match, 1))) state_.grad_norm = norm;
  }
  if (FirstMatch(throughput_, line, hints, match)) {
    auto number = ToDouble(Group(match, 1));
    std::string_view unit = Group(match, 2);
    if (number && !unit.empty()) UpdateThroughput(NormalizeThroughput(*number, unit));
  }
}

void MetricsTracker::UpdateThroughput(Throughput reading) {
  const std::string_view family = ThroughputFamily(reading);  // a view into reading or a literal
  auto best = best_by_family_.find(family);
  if (best == best_by_family_.end()) {
    best = best_by_family_.emplace(std::string(family), reading).first;
  } else if (IsFaster(reading, best->second)) {
    best->second = reading;
  }
  state_.best_throughput = best->second;
  state_.throughput = std::move(reading);
}

}  // namespace gpuctl::train
