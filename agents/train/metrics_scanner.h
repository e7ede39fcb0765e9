// The built-in metrics grammar, scanned by hand in one pass over a line: the
// default patterns of metrics.h as a tokenizer instead of regular
// expressions, which cost microseconds a line (a busy job's log went by at
// 11 MB/s). What it reads:
//   KEY [quote] [spaces] [':' | '='] [spaces] NUMBER, with KEY one of
//     step, global_step (step); iter, iteration (step); loss, train_loss
//     (loss, never eval_loss or val_loss); grad_norm, grad norm;
//     learning_rate, learning rate, lr,
//   tqdm's "N/TOTAL [ELAPSED<" (step),
//   NUMBER [space] [k|K|M|G] [space] UNIT/s or /sec, UNIT one of tok,
//     tokens, token, samples, sample, it, img, images; or NUMBER [space] s/it,
// where NUMBER is [+-] digits with optional ",ddd" groups, an optional
// fraction and exponent, or nan / inf. A rate's sign counts only when
// nothing of a word or number runs into it ("-13.8 Ktok/s" is -13800 as the
// job printed it; "epoch 1-13.8 Ktok/s" is 13800). A key is a whole word ('_' and
// letters count as word characters, so max_steps is not step). The first
// occurrence wins, in the order above.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "agents/train/throughput.h"

namespace gpuctl::train {

struct MetricsReading {
  std::optional<uint64_t> step;
  std::optional<double> loss;
  std::optional<double> grad_norm;
  std::optional<double> learning_rate;
  std::optional<Throughput> throughput;
};

MetricsReading ScanMetrics(std::string_view line);

// An exception's message or a traceback line ("RuntimeError: ... at step
// 5", '  File "train.py"'): prose about the run, not a reading of it.
bool LooksLikeErrorProse(std::string_view line);

// NUMBER at the start of `text` (see above): its value and length.
struct ScannedNumber {
  double value = 0;
  size_t length = 0;
  bool whole = true;  // no fraction, exponent, nan or inf
};
std::optional<ScannedNumber> ScanNumber(std::string_view text);

// "2.1043", "693": digits with at most one '.', 15 digits at most, read as
// from_chars would (the same double, bit for bit) but by one division;
// nullopt for anything else (an exponent, more digits), which from_chars reads.
std::optional<double> ShortDecimal(std::string_view digits);

}  // namespace gpuctl::train
