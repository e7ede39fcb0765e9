// Training progress read from a job's log lines: step, loss, gradient norm and
// throughput, by regular expressions a job may replace.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "agents/train/literal_scanner.h"
#include "agents/train/throughput.h"
#include "common/status.h"

namespace gpuctl::train {

// One ECMAScript regular expression. It is tried only on lines that contain
// one of `hints` (on every line when there are none): a cheap test that keeps
// the regex, which costs microseconds a line, off most lines of a fast log.
struct MetricPattern {
  std::string regex;
  std::vector<std::string> hints;
  bool operator==(const MetricPattern&) const = default;
};

// Tried in order; the first that matches a line gives the value. step,
// loss and grad_norm capture the number in group 1; throughput captures the
// number in group 1 and the unit as printed in group 2 ("Ktok/s", "it/s").
// The defaults read:
//   step 693 | loss 2.104 | 13.8 Ktok/s       (also tok/s, tokens/s, Mtok/s, K tok/s)
//   {'loss': 2.1043, 'grad_norm': 1.2, 'learning_rate': 4.5e-05, 'epoch': 0.12}
//   12%|█▏   | 693/20000 [12:01<5:33:12,  1.04it/s]   (step 693; also s/it)
//   iteration 693/20000 | lm loss: 2.1E+00 | grad norm: 1.2   (Megatron)
//   iter 693: loss 2.1043, time 120.00ms                      (nanoGPT)
//   32.5 samples/s, 410 img/s
// "train_loss" counts as the loss, "eval_loss" and "val_loss" do not.
struct MetricsPatterns {
  std::vector<MetricPattern> step = {
      {R"(\b(?:global_)?[Ss]tep\b['"]?\s*[:=]?\s*(\d+))", {"step", "Step"}},
      {R"(\b[Ii]ter(?:ation)?\b['"]?\s*[:=]?\s*(\d+))", {"iter", "Iter"}},
      {R"((\d+)/\d+ \[[\d:]+<)", {"<"}},  // tqdm: n/total [elapsed<remaining
  };
  std::vector<MetricPattern> loss = {
      {R"(\b(?:train_)?[Ll]oss\b['"]?\s*[:=]?\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[Nn]a[Nn]|[-+]?inf))",
       {"loss", "Loss"}},
  };
  std::vector<MetricPattern> grad_norm = {
      {R"(\bgrad[_ ]norm\b['"]?\s*[:=]?\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[Nn]a[Nn]|[-+]?inf))",
       {"grad_norm", "grad norm"}},
  };
  // A sign counts where the scanner's does: with no word or number running
  // into it (\B before the sign), so "-13.8 Ktok/s" stays negative.
  std::vector<MetricPattern> throughput = {
      {R"(((?:\B[-+])?\d[\d,]*(?:\.\d+)?)\s?([kKMG]?\s?(?:tok|tokens|token|samples|sample|it|img|images)/s(?:ec)?)\b)",
       {"tok", "it/s", "sample", "img/s", "images/s"}},
      {R"(((?:\B[-+])?\d+(?:\.\d+)?)\s?(s/it)\b)", {"s/it"}},
  };
  bool operator==(const MetricsPatterns&) const = default;
};

struct MetricsState {
  std::optional<uint64_t> step;
  std::optional<double> loss;  // may be NaN or inf: worth showing
  std::optional<double> grad_norm;
  std::optional<double> learning_rate;
  std::optional<Throughput> throughput;  // the latest reading
  // The fastest reading of the latest reading's family (see ThroughputFamily).
  std::optional<Throughput> best_throughput;
  uint64_t lines_seen = 0;
  bool operator==(const MetricsState&) const = default;
};

class MetricsTracker {
 public:
  // Compiles the patterns once. An expression that does not compile, or lacks
  // the capture groups above, is refused with the pattern named; so are more
  // than 64 distinct hints in all. The default patterns are read by the
  // hand-written scanner of metrics_scanner.h instead: the same grammar, a
  // hundred times faster.
  static Result<MetricsTracker> Create(const MetricsPatterns& patterns = {});

  // One log line (no terminator), e.g. from LineSplitter. Only the first
  // kMaxScannedBytes of a line are searched, which bounds the regex's cost.
  void Observe(std::string_view line);

  const MetricsState& state() const { return state_; }

  static constexpr size_t kMaxScannedBytes = 4096;

 private:
  struct Compiled {
    std::regex regex;
    uint64_t hint_bits = 0;  // its hints' bits in scanner_; 0: no hints, always try
  };

  MetricsTracker() = default;
  // Whether one of `patterns` matches `line`; the first match goes to `match`.
  static bool FirstMatch(const std::vector<Compiled>& patterns, std::string_view line,
                         uint64_t hints_present, std::cmatch& match);
  void UpdateThroughput(Throughput reading);

  bool builtin_ = false;  // the default patterns: ScanMetrics, no regex
  std::vector<Compiled> step_, loss_, grad_norm_, throughput_;
  LiteralScanner scanner_{{}};  // finds all patterns' hints in one pass
  std::map<std::string, Throughput, std::less<>> best_by_family_;
  MetricsState state_;
};

}  // namespace gpuctl::train
