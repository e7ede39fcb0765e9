// A plain text table: a header row and left-aligned columns, two spaces apart.
// Cells often hold text from outside (job names, state reasons, GPU names,
// a node's error): Render() escapes every cell with EscapeForTerminal, so a
// control character can neither drive the terminal nor break a row, and
// widths are measured on what is shown.
#pragma once

#include <string>
#include <vector>

namespace gpuctl::client {

class Table {
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  void AddRow(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  // A row of `leading` cells and then `text` across the other columns (a
  // node's error in a fleet table): `text` does not widen them.
  void AddSpanningRow(std::vector<std::string> leading, std::string text) {
    spans_.push_back({rows_.size(), std::move(leading), std::move(text)});
    rows_.push_back({});
  }
  void AddSpanningRow(std::string first, std::string text) {
    AddSpanningRow(std::vector<std::string>{std::move(first)}, std::move(text));
  }
  std::string Render() const;

 private:
  std::vector<std::string> header_;
  struct Span {
    size_t row;
    std::vector<std::string> leading;
    std::string text;
  };
  std::vector<std::vector<std::string>> rows_;
  std::vector<Span> spans_;
};

}  // namespace gpuctl::client
