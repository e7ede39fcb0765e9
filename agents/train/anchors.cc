#include "agents/train/anchors.h"

#include <charconv>

namespace gpuctl::train {
namespace {

// A following token is the flag's value unless it is itself an option; a
// negative number ("-5") is still a value, a wrong one the script will refuse.
bool LooksLikeOption(const std::string& token) {
  return token.size() >= 2 && token[0] == '-' && !(token[1] >= '0' && token[1] <= '9');
}

}  // namespace

std::vector<std::string> ApplyAnchorsFlag(std::vector<std::string> argv, uint64_t anchors,
                                          std::string_view flag) {
  if (flag.empty()) return argv;
  const std::string value = std::to_string(anchors);
  const std::string flag_with_equals = std::string(flag) + "=";
  std::vector<std::string> out;
  out.reserve(argv.size() + 2);
  bool placed = false;
  for (size_t i = 0; i < argv.size(); ++i) {
    std::string& token = argv[i];
    if (i == 0) {
      out.push_back(std::move(token));
      continue;
    }
    bool separate = token == flag;
    bool joined = token.starts_with(flag_with_equals);
    if (!separate && !joined) {
      out.push_back(std::move(token));
      continue;
    }
    bool has_separate_value = separate && i + 1 < argv.size() && !LooksLikeOption(argv[i + 1]);
    if (has_separate_value) ++i;  // drop the old value
    if (placed) continue;         // a later occurrence: drop it too
    placed = true;
    if (joined) {
      out.push_back(flag_with_equals + value);
    } else {
      out.push_back(std::move(token));
      out.push_back(value);
    }
  }
  if (!placed) {
    out.emplace_back(flag);
    out.push_back(value);
  }
  return out;
}

}  // namespace gpuctl::train
