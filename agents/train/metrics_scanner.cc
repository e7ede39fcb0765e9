#include "agents/train/metrics_scanner.h"

#include <charconv>
#include <cstdint>
#include <cmath>
#include <limits>
#include <string>

#include "agents/train/word_starts.h"

namespace gpuctl::train {
namespace {

constexpr bool IsWordCharSlow(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Byte classes by table: the scanner looks at every byte of every line.
struct ByteClasses {
  bool word[256] = {};
  bool key_start[256] = {};  // the first letters of the keys, either case
};
constexpr ByteClasses MakeByteClasses() {
  ByteClasses t;
  for (int c = 0; c < 256; ++c) t.word[c] = IsWordCharSlow(static_cast<char>(c));
  for (char c : {'s', 'g', 'i', 't', 'l'}) {
    t.key_start[static_cast<unsigned char>(c)] = true;
    t.key_start[static_cast<unsigned char>(c - 'a' + 'A')] = true;
  }
  return t;
}
constexpr ByteClasses kBytes = MakeByteClasses();

bool IsWordChar(char c) { return kBytes.word[static_cast<unsigned char>(c)]; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsBlank(char c) { return c == ' ' || c == '\t'; }

bool StartsWithNoCase(std::string_view text, std::string_view word) {
  if (text.size() < word.size()) return false;
  for (size_t i = 0; i < word.size(); ++i) {
    char a = text[i], b = word[i];
    if (a >= 'A' && a <= 'Z') a = static_cast<char>(a - 'A' + 'a');
    if (a != b) return false;
  }
  return true;
}

// After a key: ['"] blanks [':' | '='] blanks, then NUMBER.
std::optional<ScannedNumber> ValueAfterKey(std::string_view rest) {
  size_t i = 0;
  if (i < rest.size() && (rest[i] == '\'' || rest[i] == '"')) ++i;
  while (i < rest.size() && IsBlank(rest[i])) ++i;
  if (i < rest.size() && (rest[i] == ':' || rest[i] == '=')) ++i;
  while (i < rest.size() && IsBlank(rest[i])) ++i;
  return ScanNumber(rest.substr(i));
}

// Which reading a key gives, and the keys, tried at each word start.
enum class Key { kStep, kIter, kLoss, kGradNorm, kLearningRate };
struct KeySpelling {
  std::string_view text;
  Key key;
};
constexpr KeySpelling kKeys[] = {
    {"global_step", Key::kStep},    {"step", Key::kStep},         {"iteration", Key::kIter},
    {"iter", Key::kIter},           {"train_loss", Key::kLoss},   {"loss", Key::kLoss},
    {"grad_norm", Key::kGradNorm},  {"grad norm", Key::kGradNorm}, {"learning_rate", Key::kLearningRate},
    {"learning rate", Key::kLearningRate}, {"lr", Key::kLearningRate},
};
constexpr size_t kKeyCount = 5;

// The spellings by first letter, in kKeys' order (longer ones first).
constexpr size_t kMostPerLetter = 4;
struct KeysByLetter {
  uint8_t count[26] = {};
  uint8_t index[26][kMostPerLetter] = {};
};
constexpr KeysByLetter MakeKeysByLetter() {
  KeysByLetter t;
  for (size_t i = 0; i < sizeof kKeys / sizeof kKeys[0]; ++i) {
    auto letter = static_cast<size_t>(kKeys[i].text[0] - 'a');
    t.index[letter][t.count[letter]++] = static_cast<uint8_t>(i);
  }
  return t;
}
constexpr KeysByLetter kKeysByLetter = MakeKeysByLetter();

// The first value of each key in a line. Filled by KeyedValues for every
// line: the values stay uninitialised until found, since clearing five
// optionals per line (rep stos) was an eighth of the scanner's time.
struct KeyedNumbers {
  double value[kKeyCount];
  bool whole[kKeyCount];
  unsigned found = 0;  // bit k: value[k] and whole[k] hold key k's
  std::optional<ScannedNumber> Of(Key key) const {
    auto slot = static_cast<size_t>(key);
    if ((found & (1u << slot)) == 0) return std::nullopt;
    return ScannedNumber{value[slot], 0, whole[slot]};
  }
};

// The first of the keys spelled at word start `at` whose value follows.
void KeyAt(std::string_view line, size_t at, KeyedNumbers& found, size_t& missing) {
  const char c = line[at];
  char lower = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  const auto letter = static_cast<size_t>(lower - 'a');
  for (size_t n = 0; n < kKeysByLetter.count[letter]; ++n) {
    const KeySpelling& k = kKeys[kKeysByLetter.index[letter][n]];
    auto slot = static_cast<size_t>(k.key);
    if ((found.found & (1u << slot)) != 0 || !StartsWithNoCase(line.substr(at), k.text)) continue;
    size_t end = at + k.text.size();
    if (end < line.size() && IsWordChar(line[end])) continue;
    if (std::optional<ScannedNumber> value = ValueAfterKey(line.substr(end))) {
      found.value[slot] = value->value;
      found.whole[slot] = value->whole;
      found.found |= 1u << slot;
      --missing;
      return;
    }
  }
}

// One pass over the line's word starts: the first value of each key.
void KeyedValues(std::string_view line, KeyedNumbers& found) {
  size_t missing = kKeyCount;
  WordStarts starts(line);
  for (size_t at = starts.Next(); missing > 0 && at != std::string_view::npos; at = starts.Next()) {
    if (kBytes.key_start[static_cast<unsigned char>(line[at])]) KeyAt(line, at, found, missing);
  }
}

// tqdm: "N/TOTAL [ELAPSED<" (ELAPSED of digits and ':').
std::optional<uint64_t> TqdmStep(std::string_view line) {
  for (size_t open = line.find(" ["); open != std::string_view::npos; open = line.find(" [", open + 1)) {
    size_t close = open + 2;
    while (close < line.size() && (IsDigit(line[close]) || line[close] == ':')) ++close;
    if (close == open + 2 || close >= line.size() || line[close] != '<') continue;
    // Back from the blank: TOTAL digits, '/', N digits.
    size_t i = open;
    while (i > 0 && IsDigit(line[i - 1])) --i;
    if (i == open || i == 0 || line[i - 1] != '/') continue;
    size_t n_end = i - 1, n_start = n_end;
    while (n_start > 0 && IsDigit(line[n_start - 1])) --n_start;
    if (n_start == n_end) continue;
    uint64_t step = 0;
    auto [ptr, ec] = std::from_chars(line.data() + n_start, line.data() + n_end, step);
    if (ec == std::errc() && ptr == line.data() + n_end) return step;
  }
  return std::nullopt;
}

bool IsMantissaChar(char c) { return IsDigit(c) || c == '.' || c == ','; }

// NUMBER ending right before `end`: looking backwards over an exponent
// ("e+03", "E-5") if there is one, then digits, ',' and '.'.
std::optional<ScannedNumber> NumberEndingAt(std::string_view line, size_t end) {
  size_t start = end;
  while (start > 0 && IsDigit(line[start - 1])) --start;
  if (start < end && start > 1) {
    size_t sign = (line[start - 1] == '+' || line[start - 1] == '-') ? start - 1 : start;
    if (sign > 1 && (line[sign - 1] == 'e' || line[sign - 1] == 'E') && IsDigit(line[sign - 2])) start = sign - 1;
  }
  while (start > 0 && IsMantissaChar(line[start - 1])) --start;
  while (start < end && !IsDigit(line[start])) ++start;  // a number starts with a digit
  if (start == end) return std::nullopt;
  // A sign right before the digits is the number's ("-13.8 Ktok/s": a rate
  // is never negative, but one the job printed negative is taken as printed,
  // not turned into a speed it never had), unless a word or a number runs
  // into it ("epoch 1-13.8", "warmup-13.8": a dash that joins).
  if (start > 0 && (line[start - 1] == '-' || line[start - 1] == '+') && (start == 1 || !IsWordChar(line[start - 2]))) {
    --start;
  }
  if (start > 0 && IsWordChar(line[start - 1])) return std::nullopt;
  std::optional<ScannedNumber> n = ScanNumber(line.substr(start, end - start));
  if (!n || n->length != end - start) return std::nullopt;
  return n;
}

std::optional<Throughput> UnitRate(std::string_view line, size_t slash) {
  static constexpr std::string_view kUnits[] = {"tokens", "token", "tok", "samples", "sample", "images", "img", "it"};
  size_t after = slash + 2;
  if (line.substr(after, 2) == "ec") after += 2;
  if (after < line.size() && IsWordChar(line[after])) return std::nullopt;
  // Every unit ends in 'k', 'n', 's', 'e', 'g' or 't' before the slash.
  if (slash == 0 || !IsWordChar(line[slash - 1])) return std::nullopt;
  for (std::string_view unit : kUnits) {
    if (slash < unit.size() || line[slash - 1] != unit.back() ||
        line.substr(slash - unit.size(), unit.size()) != unit) {
      continue;
    }
    size_t at = slash - unit.size();
    size_t unit_start = at;
    if (at > 1 && IsBlank(line[at - 1]) && std::string_view("kKMG").find(line[at - 2]) != std::string_view::npos) {
      at -= 2;  // "K tok/s"
    }
    if (at > 0 && std::string_view("kKMG").find(line[at - 1]) != std::string_view::npos) --at;
    if (at == unit_start && at > 0 && IsWordChar(line[at - 1]) && !IsDigit(line[at - 1])) continue;
    size_t number_end = at;
    if (number_end > 0 && IsBlank(line[number_end - 1])) --number_end;
    std::optional<ScannedNumber> n = NumberEndingAt(line, number_end);
    if (!n) continue;
    return NormalizeThroughput(n->value, line.substr(at, after - at));
  }
  return std::nullopt;
}

// One pass over the '/'s: UNIT/s first (anywhere in the line), else s/it.
std::optional<Throughput> Rate(std::string_view line) {
  std::optional<Throughput> seconds_per_it;
  for (size_t slash = line.find('/'); slash != std::string_view::npos; slash = line.find('/', slash + 1)) {
    if (slash + 1 < line.size() && line[slash + 1] == 's') {
      if (std::optional<Throughput> rate = UnitRate(line, slash)) return rate;
    }
    if (!seconds_per_it && slash > 0 && line[slash - 1] == 's' && line.substr(slash + 1, 2) == "it" &&
        (slash + 3 >= line.size() || !IsWordChar(line[slash + 3]))) {
      size_t number_end = slash - 1;
      if (number_end > 0 && IsBlank(line[number_end - 1])) --number_end;
      if (std::optional<ScannedNumber> n = NumberEndingAt(line, number_end)) seconds_per_it = Throughput{n->value, "s/it"};
    }
  }
  return seconds_per_it;
}

}  // namespace

namespace {

// Up to 15 digits fit a double's 53 bits exactly, as does 10^k for k <= 22,
// so one multiplication or division rounds once: the correctly rounded value
// from_chars gives, at a fraction of its cost (most numbers in logs are
// "2.1043", "693", "3.0e-04").
constexpr size_t kExactDigits = 15;
constexpr int kExactPowers = 22;
constexpr double kPowersOfTen[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                   1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

// ",ddd" at `at`, not followed by another digit: a thousands group.
bool StartsThousandsGroup(std::string_view text, size_t at) {
  return at + 3 < text.size() && text[at] == ',' && IsDigit(text[at + 1]) && IsDigit(text[at + 2]) &&
         IsDigit(text[at + 3]) && (at + 4 == text.size() || !IsDigit(text[at + 4]));
}

// The exponent at `i` ('e' or 'E', a sign, one to three digits), moving `i`
// past it. Nothing when 'e' starts no exponent ("3e", "7ex": the number ends
// before it); for a longer one a power no double reads exactly, so that the
// general path reads it.
std::optional<int> ExponentAt(std::string_view text, size_t& i) {
  if (i >= text.size() || (text[i] != 'e' && text[i] != 'E')) return std::nullopt;
  size_t e = i + 1;
  const bool negative = e < text.size() && text[e] == '-';
  if (e < text.size() && (text[e] == '+' || text[e] == '-')) ++e;
  const size_t first = e;
  int value = 0;
  for (; e < text.size() && IsDigit(text[e]) && e - first < 3; ++e) value = value * 10 + (text[e] - '0');
  if (e == first) return std::nullopt;
  // Out of the exact powers' reach whatever the fraction's digits.
  if (e < text.size() && IsDigit(text[e])) return kExactPowers + static_cast<int>(kExactDigits) + 1;
  i = e;
  return negative ? -value : value;
}

// The common NUMBER, read in place from `i`: digits, then '.' and digits,
// 15 digits in all at most, then perhaps an exponent, its whole part not
// followed by a thousands group. Anything else (more digits, a larger
// power of ten): nullopt, and ScanNumber's general path reads it.
std::optional<ScannedNumber> PlainDecimal(std::string_view text, size_t i, bool negative) {
  uint64_t mantissa = 0;
  size_t digits = 0, fraction_digits = 0;
  for (; i < text.size() && IsDigit(text[i]); ++i, ++digits) mantissa = mantissa * 10 + static_cast<uint64_t>(text[i] - '0');
  if (digits == 0 || StartsThousandsGroup(text, i)) return std::nullopt;
  bool whole = i == text.size() || text[i] != '.';
  if (!whole) {
    for (++i; i < text.size() && IsDigit(text[i]); ++i, ++fraction_digits) {
      mantissa = mantissa * 10 + static_cast<uint64_t>(text[i] - '0');
    }
    digits += fraction_digits;
  }
  if (digits > kExactDigits) return std::nullopt;
  int scale = -static_cast<int>(fraction_digits);
  if (std::optional<int> exponent = ExponentAt(text, i)) {
    scale += *exponent;
    whole = false;
  }
  if (scale < -kExactPowers || scale > kExactPowers) return std::nullopt;
  const auto exact = static_cast<double>(mantissa);
  const double value = scale >= 0 ? exact * kPowersOfTen[scale] : exact / kPowersOfTen[-scale];
  return ScannedNumber{negative ? -value : value, i, whole};
}

}  // namespace

std::optional<double> ShortDecimal(std::string_view digits) {
  uint64_t mantissa = 0;
  size_t digit_count = 0, fraction_digits = 0;
  bool in_fraction = false;
  for (char c : digits) {
    if (c == '.' && !in_fraction) {
      in_fraction = true;
      continue;
    }
    if (!IsDigit(c) || ++digit_count > kExactDigits) return std::nullopt;  // an exponent, or too long
    mantissa = mantissa * 10 + static_cast<uint64_t>(c - '0');
    if (in_fraction) ++fraction_digits;
  }
  if (digit_count == 0) return std::nullopt;
  return static_cast<double>(mantissa) / kPowersOfTen[fraction_digits];
}

std::optional<ScannedNumber> ScanNumber(std::string_view text) {
  size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
  if (i < text.size() && !IsDigit(text[i])) {
    static constexpr std::string_view kWords[] = {"nan", "inf"};
    for (std::string_view word : kWords) {
      if (StartsWithNoCase(text.substr(i), word) && (i + 3 >= text.size() || !IsWordChar(text[i + 3]))) {
        double value =
            word == "nan" ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
        return ScannedNumber{negative ? -value : value, i + 3, false};
      }
    }
    return std::nullopt;
  }
  if (std::optional<ScannedNumber> plain = PlainDecimal(text, i, negative)) return plain;
  // The number without its thousands separators, for from_chars; longer
  // ones than this are not readings.
  char digits[64];
  size_t n = 0;
  auto put = [&](char c) {
    if (n < sizeof digits) digits[n] = c;
    ++n;
  };
  size_t start = i;
  while (i < text.size() && IsDigit(text[i])) put(text[i++]);
  // "1,234,567": groups of exactly three digits after each comma.
  while (n > 0 && StartsThousandsGroup(text, i)) {
    put(text[i + 1]);
    put(text[i + 2]);
    put(text[i + 3]);
    i += 4;
  }
  if (n == 0 || i == start) return std::nullopt;
  bool whole = true;
  if (i < text.size() && text[i] == '.') {
    whole = false;
    put(text[i++]);
    while (i < text.size() && IsDigit(text[i])) put(text[i++]);
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    size_t e = i + 1;
    if (e < text.size() && (text[e] == '+' || text[e] == '-')) ++e;
    if (e < text.size() && IsDigit(text[e])) {
      put('e');
      for (size_t k = i + 1; k < e; ++k) put(text[k]);
      while (e < text.size() && IsDigit(text[e])) put(text[e++]);
      i = e;
      whole = false;
    }
  }
  if (n > sizeof digits) return std::nullopt;
  double value = 0;
  if (std::optional<double> exact = ShortDecimal(std::string_view(digits, n))) {
    value = *exact;
  } else {
    auto [ptr, ec] = std::from_chars(digits, digits + n, value);
    if (ec != std::errc()) return std::nullopt;
  }
  return ScannedNumber{negative ? -value : value, i, whole};
}

bool LooksLikeErrorProse(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && IsBlank(line[i])) ++i;
  if (line.substr(i, 1) == "[") {  // "[rank3]: " and the like
    size_t close = line.find("]:", i);
    if (close != std::string_view::npos && close < i + 16) {
      i = close + 2;
      while (i < line.size() && IsBlank(line[i])) ++i;
    }
  }
  std::string_view rest = line.substr(i);
  if (rest.starts_with("Traceback") || rest.starts_with("File \"") || rest.starts_with("raise ")) return true;
  // "torch.OutOfMemoryError: ...", "RuntimeError: ...": an exception's message.
  size_t colon = rest.find(": ");
  if (colon == std::string_view::npos) return false;
  std::string_view head = rest.substr(0, colon);
  for (char c : head) {
    if (!IsWordChar(c) && c != '.') return false;
  }
  return head.ends_with("Error") || head.ends_with("Exception") || head.ends_with("Interrupt");
}

MetricsReading ScanMetrics(std::string_view line) {
  KeyedNumbers found;
  KeyedValues(line, found);
  auto whole = [](const std::optional<ScannedNumber>& n) -> std::optional<uint64_t> {
    if (!n || !n->whole || n->value < 0 || n->value > 1e18) return std::nullopt;
    return static_cast<uint64_t>(n->value);
  };
  auto value = [](const std::optional<ScannedNumber>& n) -> std::optional<double> {
    if (!n) return std::nullopt;
    return n->value;
  };
  MetricsReading r;
  r.step = whole(found.Of(Key::kStep));
  if (!r.step) r.step = whole(found.Of(Key::kIter));
  if (!r.step && line.find('<') != std::string_view::npos) r.step = TqdmStep(line);
  r.loss = value(found.Of(Key::kLoss));
  r.grad_norm = value(found.Of(Key::kGradNorm));
  r.learning_rate = value(found.Of(Key::kLearningRate));
  r.throughput = Rate(line);
  return r;
}

}  // namespace gpuctl::train
