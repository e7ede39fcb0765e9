#include "agents/train/literal_scanner.h"

#include <deque>

namespace gpuctl::train {

LiteralScanner::LiteralScanner(const std::vector<std::string>& literals) {
  constexpr uint32_t kNone = UINT32_MAX;
  std::array<uint32_t, 256> empty;
  empty.fill(kNone);
  next_.push_back(empty);
  found_.push_back(0);
  // The trie of the literals; kNone marks a missing edge.
  for (size_t i = 0; i < literals.size() && i < kMaxLiterals; ++i) {
    if (literals[i].empty()) continue;
    uint32_t state = 0;
    for (char c : literals[i]) {
      auto byte = static_cast<unsigned char>(c);
      if (next_[state][byte] == kNone) {
        next_[state][byte] = static_cast<uint32_t>(next_.size());
        next_.push_back(empty);
        found_.push_back(0);
      }
      state = next_[state][byte];
    }
    found_[state] |= uint64_t{1} << i;
  }
  // Breadth first, turn missing edges into the edges of the longest proper
  // suffix that is in the trie, and inherit what that suffix finds.
  std::vector<uint32_t> suffix(next_.size(), 0);
  std::deque<uint32_t> queue;
  for (uint32_t& to : next_[0]) {
    if (to == kNone) {
      to = 0;
    } else {
      queue.push_back(to);
    }
  }
  while (!queue.empty()) {
    uint32_t state = queue.front();
    queue.pop_front();
    found_[state] |= found_[suffix[state]];
    for (size_t byte = 0; byte < 256; ++byte) {
      uint32_t& to = next_[state][byte];
      if (to == kNone) {
        to = next_[suffix[state]][byte];
      } else {
        suffix[to] = next_[suffix[state]][byte];
        queue.push_back(to);
      }
    }
  }
}

uint64_t LiteralScanner::Scan(std::string_view text) const {
  uint32_t state = 0;
  uint64_t found = 0;
  for (char c : text) {
    state = next_[state][static_cast<unsigned char>(c)];
    found |= found_[state];
  }
  return found;
}

}  // namespace gpuctl::train
