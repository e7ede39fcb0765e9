// The command lines a README shows, for the tests that hold the README to
// the programs' --help (tests/unit/client/readme_help_truth_test.cc,
// tests/unit/daemon/readme_flags_truth_test.cc): every line of its sh code
// blocks, the "$ " lines of its other blocks (joined at trailing
// backslashes, the prompt dropped), and its inline code spans (a span may
// run across a line break). Each with the README line it starts on.
#pragma once

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace gpuctl::readme_code {

struct ReadmeCode {
  int line = 0;
  std::string text;
  bool inline_span = false;  // from `...` in prose, not a code block
};

inline std::string ReadSourceFile(const std::string& relative) {
  std::ifstream in(std::string(GPUCTL_SOURCE_DIR) + "/" + relative);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

inline std::vector<ReadmeCode> ReadmeCodeLines(const std::string& readme) {
  std::vector<ReadmeCode> code;
  std::istringstream lines(readme);
  bool in_block = false;
  bool shell_block = false;
  std::string joined;
  int joined_from = 0;
  int number = 0;
  std::string prose;  // the text outside code blocks; a block's lines left empty
  for (std::string line; std::getline(lines, line);) {
    ++number;
    if (line.rfind("```", 0) == 0) {
      in_block = !in_block;
      shell_block = in_block && (line == "```sh" || line == "```bash" || line == "```console");
      prose += "\n";
      continue;
    }
    if (!in_block) {
      prose += line + "\n";
      continue;
    }
    prose += "\n";
    // A block of output shows its commands after a "$ " prompt.
    const bool prompted = line.rfind("$ ", 0) == 0;
    if (!shell_block && !prompted && joined.empty()) continue;
    if (joined.empty()) joined_from = number;
    std::string text = prompted ? line.substr(2) : line;
    if (!text.empty() && text.back() == '\\') {
      joined += text.substr(0, text.size() - 1) + " ";
      continue;
    }
    code.push_back({joined_from, joined + text, false});
    joined.clear();
  }
  static const std::regex inline_code("`([^`]+)`");
  for (std::sregex_iterator it(prose.begin(), prose.end(), inline_code), end; it != end; ++it) {
    std::string text = (*it)[1].str();
    std::replace(text.begin(), text.end(), '\n', ' ');
    const auto before = prose.begin() + (*it).position(0);
    code.push_back({1 + static_cast<int>(std::count(prose.begin(), before, '\n')), text, true});
  }
  return code;
}

// Whether the README names this flag as a word of its own: not as the start
// of a longer one (--node in --nodes), nor inside one (-o in --output).
inline bool MentionsFlag(const std::string& readme, const std::string& flag) {
  static const std::string kFlagEnd = " `=,.;:)]|\n";
  static const std::string kFlagStart = " `([|\n";
  for (size_t at = readme.find(flag); at != std::string::npos; at = readme.find(flag, at + 1)) {
    const size_t after = at + flag.size();
    const bool starts = at == 0 || kFlagStart.find(readme[at - 1]) != std::string::npos;
    if (starts && (after >= readme.size() || kFlagEnd.find(readme[after]) != std::string::npos)) return true;
  }
  return false;
}

}  // namespace gpuctl::readme_code
