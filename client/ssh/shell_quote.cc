#include "client/ssh/shell_quote.h"

namespace gpuctl::client::ssh {

std::string ShellQuote(const std::string& word) {
  std::string out = "'";
  for (char c : word) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  out += "'";
  return out;
}

std::string ShellJoin(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& word : words) {
    if (!out.empty()) out += ' ';
    out += ShellQuote(word);
  }
  return out;
}

}  // namespace gpuctl::client::ssh
