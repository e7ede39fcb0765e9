#include "agents/train/alloc_conf.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/job_rules.h"

namespace gpuctl::train {
namespace {

// kLargeBuffer / 1 MiB in c10: blocks smaller than this are never split.
constexpr uint64_t kMinSplitSizeMb = 20;
// CUDAAllocatorConfig::pinned_max_register_threads().
constexpr uint64_t kMaxRegisterThreads = 128;

enum class ValueKind {
  kBool,
  kSplitSizeMb,       // whole number >= kMinSplitSizeMb
  kPositiveMb,        // whole number > 0
  kOpenFraction,      // (0, 1)
  kClosedFraction,    // [0, 1]
  kBackend,
  kRegisterThreads,   // power of two <= kMaxRegisterThreads
  kRoundupDivisions,  // power of two, or [size:divisions,...]
};

struct KeySpec {
  std::string_view key;
  ValueKind kind;
  std::string_view example_value;
};

// Sorted by name: the error for an unknown key lists them in this order.
constexpr KeySpec kKeys[] = {
    {"backend", ValueKind::kBackend, "cudaMallocAsync"},
    {"expandable_segments", ValueKind::kBool, "True"},
    {"garbage_collection_threshold", ValueKind::kOpenFraction, "0.6"},
    {"graph_capture_record_stream_reuse", ValueKind::kBool, "True"},
    {"max_non_split_rounding_mb", ValueKind::kSplitSizeMb, "64"},
    {"max_split_size_mb", ValueKind::kSplitSizeMb, "512"},
    {"per_process_memory_fraction", ValueKind::kClosedFraction, "0.9"},
    {"pinned_num_register_threads", ValueKind::kRegisterThreads, "8"},
    {"pinned_reserve_segment_size_mb", ValueKind::kPositiveMb, "1024"},
    {"pinned_use_background_threads", ValueKind::kBool, "True"},
    {"pinned_use_cuda_host_register", ValueKind::kBool, "True"},
    {"pinned_use_hip_host_register", ValueKind::kBool, "True"},
    {"release_lock_on_cudamalloc", ValueKind::kBool, "True"},
    {"release_lock_on_hipmalloc", ValueKind::kBool, "True"},
    {"roundup_power2_divisions", ValueKind::kRoundupDivisions, "[256:1,512:2,>:4]"},
};

bool IsPunctuation(std::string_view token) {
  return token == "," || token == ":" || token == "[" || token == "]";
}

}  // namespace

std::vector<std::string> TokenizeAllocConf(std::string_view conf) {
  std::vector<std::string> tokens;
  std::string word;
  for (char ch : conf) {
    if (ch == ',' || ch == ':' || ch == '[' || ch == ']') {
      if (!word.empty()) tokens.push_back(std::move(word));
      word.clear();
      tokens.emplace_back(1, ch);
    } else if (!std::isspace(static_cast<unsigned char>(ch))) {
      word += ch;
    }
  }
  if (!word.empty()) tokens.push_back(std::move(word));
  return tokens;
}

std::string AllocConfItem::Text() const { return value ? key + ":" + *value : key; }

std::vector<AllocConfItem> AllocConfItems(std::string_view conf) {
  std::vector<AllocConfItem> items;
  std::optional<AllocConfItem> item;
  int depth = 0;
  for (std::string& token : TokenizeAllocConf(conf)) {
    if (token == "[") ++depth;
    if (token == "]" && depth > 0) --depth;
    if (token == "," && depth == 0) {
      if (item) items.push_back(std::move(*item));
      item.reset();
      continue;
    }
    if (!item) {
      item.emplace();
      if (token != ":") {
        item->key = std::move(token);
        continue;
      }
    }
    if (!item->value) {
      item->value.emplace();
      if (token == ":") continue;  // the key's colon
    }
    *item->value += token;
  }
  if (item) items.push_back(std::move(*item));
  return items;
}

namespace {


std::optional<double> ParseDecimal(std::string_view text) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

bool IsPowerOfTwo(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string Example(const KeySpec& spec) {
  return " (e.g. --alloc-conf " + std::string(spec.key) + ":" + std::string(spec.example_value) +
         ")";
}

Status UnknownKey(std::string_view key) {
  std::string message = "unknown allocator setting '" + std::string(key) + "'";
  const KeySpec* nearest = nullptr;
  size_t nearest_distance = 4;  // suggest only names a small typo away
  for (const KeySpec& spec : kKeys) {
    size_t d = EditDistance(key, spec.key);
    if (d < nearest_distance) {
      nearest = &spec;
      nearest_distance = d;
    }
  }
  if (nearest != nullptr) message += " (did you mean '" + std::string(nearest->key) + "'?)";
  message += "; known keys are";
  for (const KeySpec& spec : kKeys) {
    message += (&spec == &kKeys[0] ? " " : ", ");
    message += spec.key;
  }
  return InvalidArgument(message + " (e.g. --alloc-conf expandable_segments:True)");
}

// Walks the tokens the way CUDAAllocatorConfig::parseArgs does.
class AllocConfChecker {
 public:
  explicit AllocConfChecker(std::vector<std::string> tokens) : tokens_(std::move(tokens)) {}

  Status Check() {
    while (i_ < tokens_.size()) {
      const std::string& key = tokens_[i_];
      if (IsPunctuation(key)) {
        return InvalidArgument("expected a setting name, got '" + key +
                               "'; separate key:value pairs with single commas "
                               "(e.g. --alloc-conf expandable_segments:True,max_split_size_mb:512)");
      }
      const KeySpec* spec = Find(key);
      if (spec == nullptr) return UnknownKey(key);
      if (i_ + 1 >= tokens_.size() || tokens_[i_ + 1] != ":") {
        return InvalidArgument("expected ':' and a value after '" + key + "'" + Example(*spec));
      }
      i_ += 2;
      if (i_ >= tokens_.size() || (IsPunctuation(tokens_[i_]) && tokens_[i_] != "[")) {
        return InvalidArgument(key + " needs a value after ':'" + Example(*spec));
      }
      if (Status s = CheckValue(*spec); !s.ok()) return s;
      ++i_;  // past the value (or the closing ']')
      if (i_ < tokens_.size()) {
        if (tokens_[i_] != ",") {
          return InvalidArgument("expected ',' after the value of " + key + ", got '" +
                                 tokens_[i_] + "'" + Example(*spec));
        }
        ++i_;
      }
    }
    return Status::Ok();
  }

 private:
  static const KeySpec* Find(std::string_view key) {
    for (const KeySpec& spec : kKeys) {
      if (spec.key == key) return &spec;
    }
    return nullptr;
  }

  Status Bad(const KeySpec& spec, std::string_view what, std::string_view hint = "") const {
    std::string message = std::string(spec.key) + " must be " + std::string(what) + ", got '" +
                          tokens_[i_] + "'";
    if (!hint.empty()) message += "; " + std::string(hint);
    return InvalidArgument(message + Example(spec));
  }

  // On entry i_ is the value's first token; on success it is its last one.
  Status CheckValue(const KeySpec& spec) {
    const std::string& value = tokens_[i_];
    if (value == "[" && spec.kind != ValueKind::kRoundupDivisions) {
      return Bad(spec, "a single value, not a list");
    }
    switch (spec.kind) {
      case ValueKind::kBool:
        if (value == "True" || value == "False") return Status::Ok();
        if (value == "true" || value == "false" || value == "TRUE" || value == "FALSE") {
          return Bad(spec, "True or False", "the capital letter matters");
        }
        return Bad(spec, "True or False");
      case ValueKind::kSplitSizeMb: {
        auto mb = ParseWholeNumber(value);
        if (!mb || *mb < kMinSplitSizeMb) return Bad(spec, "a whole number of MiB, at least 20");
        return Status::Ok();
      }
      case ValueKind::kPositiveMb: {
        auto mb = ParseWholeNumber(value);
        if (!mb || *mb == 0) return Bad(spec, "a whole number of MiB above 0");
        return Status::Ok();
      }
      case ValueKind::kOpenFraction: {
        auto v = ParseDecimal(value);
        if (!v || !(*v > 0 && *v < 1)) return Bad(spec, "a number strictly between 0 and 1");
        return Status::Ok();
      }
      case ValueKind::kClosedFraction: {
        auto v = ParseDecimal(value);
        if (!v || !(*v >= 0 && *v <= 1)) return Bad(spec, "a number from 0 to 1");
        return Status::Ok();
      }
      case ValueKind::kBackend:
        if (value == "native" || value == "cudaMallocAsync") return Status::Ok();
        return Bad(spec, "native or cudaMallocAsync");
      case ValueKind::kRegisterThreads: {
        auto n = ParseWholeNumber(value);
        if (!n || !IsPowerOfTwo(*n) || *n > kMaxRegisterThreads) {
          return Bad(spec, "a power of two no larger than 128");
        }
        return Status::Ok();
      }
      case ValueKind::kRoundupDivisions:
        return CheckRoundupDivisions(spec);
    }
    return Internal("unhandled allocator value kind");
  }

  Status CheckRoundupDivisions(const KeySpec& spec) {
    if (tokens_[i_] != "[") {
      auto n = ParseWholeNumber(tokens_[i_]);
      if (!n || !IsPowerOfTwo(*n)) {
        return Bad(spec, "a power of two or a list of size:divisions pairs");
      }
      return Status::Ok();
    }
    const std::string list_example = Example(spec);
    ++i_;
    while (i_ < tokens_.size() && tokens_[i_] != "]") {
      const std::string& size = tokens_[i_];
      auto size_mb = ParseWholeNumber(size);
      if (size != ">" && (!size_mb || !IsPowerOfTwo(*size_mb))) {
        return InvalidArgument("roundup_power2_divisions: each size must be a power of two (MiB) "
                               "or '>', got '" + size + "'" + list_example);
      }
      if (i_ + 2 >= tokens_.size() || tokens_[i_ + 1] != ":") {
        return InvalidArgument("roundup_power2_divisions: expected size:divisions, got '" + size +
                               "' without ':' and a number" + list_example);
      }
      i_ += 2;
      auto divisions = ParseWholeNumber(tokens_[i_]);
      if (!divisions || (*divisions != 0 && !IsPowerOfTwo(*divisions))) {
        return InvalidArgument("roundup_power2_divisions: divisions for size '" + size +
                               "' must be a power of two or 0, got '" + tokens_[i_] + "'" +
                               list_example);
      }
      ++i_;
      if (i_ < tokens_.size() && tokens_[i_] == ",") ++i_;
      else if (i_ < tokens_.size() && tokens_[i_] != "]") {
        return InvalidArgument("roundup_power2_divisions: expected ',' or ']' after '" + size +
                               ":" + tokens_[i_ - 1] + "', got '" + tokens_[i_] + "'" +
                               list_example);
      }
    }
    if (i_ >= tokens_.size()) {
      return InvalidArgument("roundup_power2_divisions: the list has no closing ']'" + list_example);
    }
    return Status::Ok();
  }

  std::vector<std::string> tokens_;
  size_t i_ = 0;
};

}  // namespace

Status ValidateAllocConf(std::string_view conf) {
  std::vector<std::string> tokens = TokenizeAllocConf(conf);
  if (tokens.empty()) {
    return InvalidArgument("the allocator config is empty: give key:value pairs "
                           "(e.g. --alloc-conf expandable_segments:True) or leave the option out");
  }
  return AllocConfChecker(std::move(tokens)).Check();
}

}  // namespace gpuctl::train
