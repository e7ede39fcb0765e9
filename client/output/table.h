// A plain text table: a header row and left-aligned columns, two spaces apart.
#pragma once

#include <string>
#include <vector>

namespace gpuctl::client {

class Table {
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  void AddRow(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  std::string Render() const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace gpuctl::client
