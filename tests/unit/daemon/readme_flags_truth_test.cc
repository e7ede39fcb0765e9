// Issue 24 item 4, for the agent: `gpuctld --help` and the README agree.
// Every flag the help shows is in the README, and every gpuctld command
// line the README shows (code blocks, and inline code also across a line
// break) uses flags gpuctld has. (ConfigFileKeys holds the config keys.)
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "daemon/config/flags.h"
#include "tests/support/readme_code.h"

namespace gpuctl::daemon {
namespace {

std::string ReadReadme() { return readme_code::ReadSourceFile("README.md"); }

std::set<std::string> GpuctldFlags() {
  const char* argv[] = {"gpuctld", "--help"};
  Result<FlagsOutcome> outcome = ParseDaemonFlags(2, argv);
  EXPECT_TRUE(outcome.ok());
  std::set<std::string> flags;
  if (!outcome.ok()) return flags;
  static const std::regex option_line(R"(^  (--?[A-Za-z0-9][-A-Za-z0-9,]*)(\s|$))");
  // A mode the description gives before the options (gpuctld --bridge SOCKET).
  static const std::regex mode(R"(gpuctld (--[a-z][-a-z]*))");
  const std::string& help = outcome->print_and_exit;
  const std::string description = help.substr(0, help.find("Options:"));
  for (std::sregex_iterator it(description.begin(), description.end(), mode), end; it != end; ++it) {
    flags.insert((*it)[1].str());
  }
  std::istringstream lines(help);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (!std::regex_search(line, m, option_line)) continue;
    std::stringstream names(m[1].str());
    for (std::string name; std::getline(names, name, ',');) flags.insert(name);
  }
  return flags;
}

// The flags of each gpuctld command line in TEXT (the words after a word
// ending in "gpuctld", up to a shell separator or a comment), with the line.
void CollectGpuctldFlags(const std::string& text, int line, std::vector<std::pair<int, std::string>>& used) {
  std::istringstream words(text);
  bool open = false;
  for (std::string word; words >> word;) {
    if (word[0] == '#') break;
    const size_t cut = word.find_last_of("/\"(");
    if (word.compare(cut == std::string::npos ? 0 : cut + 1, std::string::npos, "gpuctld") == 0) {
      open = true;
      continue;
    }
    if (!open) continue;
    if (word == "|" || word == "&&" || word == ";" || word == "&" || word[0] == '>' || word.rfind("2>", 0) == 0) {
      open = false;
      continue;
    }
    if (word.size() > 2 && word.rfind("--", 0) == 0) used.emplace_back(line, word.substr(0, word.find('=')));
  }
}

std::vector<std::pair<int, std::string>> ReadmeGpuctldFlags(const std::string& readme) {
  std::vector<std::pair<int, std::string>> used;
  for (const readme_code::ReadmeCode& code : readme_code::ReadmeCodeLines(readme)) {
    if (code.inline_span && code.text.rfind("gpuctld ", 0) != 0) continue;  // prose naming gpuctld
    CollectGpuctldFlags(code.text, code.line, used);
  }
  return used;
}

TEST(GpuctldReadmeTruth, TheCheckerFindsAFlagGpuctldLacks) {
  const std::string readme =
      "```sh\n"
      "gpuctld --state-dir /srv/s \\\n"
      "  --guard-reserv 2G   # a typo\n"
      "```\n"
      "Run `gpuctld --listen\nunix:/x --no-such` once.\n";
  const std::set<std::string> flags = GpuctldFlags();
  std::vector<std::string> wrong;
  for (const auto& [line, flag] : ReadmeGpuctldFlags(readme)) {
    if (!flags.count(flag)) wrong.push_back(std::to_string(line) + " " + flag);
  }
  EXPECT_EQ(wrong, (std::vector<std::string>{"2 --guard-reserv", "5 --no-such"}));
}

TEST(GpuctldReadmeTruth, EveryGpuctldFlagInTheReadmeExists) {
  const std::set<std::string> flags = GpuctldFlags();
  ASSERT_TRUE(flags.count("--state-dir")) << "the help was not read";
  const auto used = ReadmeGpuctldFlags(ReadReadme());
  ASSERT_GT(used.size(), 5u);
  for (const auto& [line, flag] : used) {
    EXPECT_TRUE(flags.count(flag)) << "README line " << line << ": gpuctld has no flag " << flag;
  }
}

TEST(GpuctldReadmeTruth, EveryFlagTheHelpShowsIsInTheReadme) {
  const std::string readme = ReadReadme();
  for (const std::string& flag : GpuctldFlags()) {
    if (flag.rfind("--", 0) != 0 || flag == "--help" || flag == "--version") continue;
    const bool found = readme_code::MentionsFlag(readme, flag);
    EXPECT_TRUE(found) << "'gpuctld --help' shows " << flag << ", which the README never mentions";
  }
}

}  // namespace
}  // namespace gpuctl::daemon
