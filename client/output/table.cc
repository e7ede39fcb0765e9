#include "client/output/table.h"

#include <algorithm>

namespace gpuctl::client {
namespace {

// Display width: count UTF-8 code points, not bytes, so "°" lines up.
size_t Width(const std::string& s) {
  return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

}  // namespace

std::string Table::Render() const {
  std::vector<size_t> widths(header_.size(), 0);
  auto measure = [&](const std::vector<std::string>& row) {
    for (size_t i = 0; i < row.size() && i < widths.size(); ++i) widths[i] = std::max(widths[i], Width(row[i]));
  };
  measure(header_);
  for (const auto& row : rows_) measure(row);
  for (const Span& span : spans_) measure(span.leading);
  std::string out;
  auto emit = [&](const std::vector<std::string>& row) {
    std::string line;
    for (size_t i = 0; i < widths.size(); ++i) {
      std::string cell = i < row.size() ? row[i] : "";
      line += cell;
      if (i + 1 < widths.size()) line += std::string(widths[i] - Width(cell) + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  };
  emit(header_);
  size_t next_span = 0;
  for (size_t r = 0; r < rows_.size(); ++r) {
    if (next_span < spans_.size() && spans_[next_span].row == r) {
      const Span& span = spans_[next_span++];
      std::string line;
      for (size_t i = 0; i < span.leading.size() && i < widths.size(); ++i) {
        line += span.leading[i] + std::string(widths[i] - Width(span.leading[i]) + 2, ' ');
      }
      out += line + span.text + "\n";
      continue;
    }
    emit(rows_[r]);
  }
  return out;
}

}  // namespace gpuctl::client
