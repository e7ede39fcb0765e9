#include "client/output/table.h"

#include <algorithm>

#include "common/utf8.h"

namespace gpuctl::client {
namespace {

// Display width: count UTF-8 code points, not bytes, so "°" lines up.
size_t Width(const std::string& s) {
  return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

std::vector<std::string> Escaped(const std::vector<std::string>& row) {
  std::vector<std::string> out;
  out.reserve(row.size());
  for (const std::string& cell : row) out.push_back(EscapeForTerminal(cell));
  return out;
}

}  // namespace

std::string Table::Render() const {
  // What is shown: escaped once here, then measured and laid out.
  const std::vector<std::string> header = Escaped(header_);
  std::vector<std::vector<std::string>> rows;
  rows.reserve(rows_.size());
  for (const auto& row : rows_) rows.push_back(Escaped(row));
  std::vector<Span> spans;
  spans.reserve(spans_.size());
  for (const Span& span : spans_) spans.push_back({span.row, Escaped(span.leading), EscapeForTerminal(span.text)});

  std::vector<size_t> widths(header.size(), 0);
  auto measure = [&](const std::vector<std::string>& row) {
    for (size_t i = 0; i < row.size() && i < widths.size(); ++i) widths[i] = std::max(widths[i], Width(row[i]));
  };
  measure(header);
  for (const auto& row : rows) measure(row);
  for (const Span& span : spans) measure(span.leading);
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
  emit(header);
  size_t next_span = 0;
  for (size_t r = 0; r < rows.size(); ++r) {
    if (next_span < spans.size() && spans[next_span].row == r) {
      const Span& span = spans[next_span++];
      std::string line;
      for (size_t i = 0; i < span.leading.size() && i < widths.size(); ++i) {
        line += span.leading[i] + std::string(widths[i] - Width(span.leading[i]) + 2, ' ');
      }
      out += line + span.text + "\n";
      continue;
    }
    emit(rows[r]);
  }
  return out;
}

}  // namespace gpuctl::client
