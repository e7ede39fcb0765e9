// Issue 24 item 4: the help and the README drifted apart (a column the help
// never named, event numbers that no longer restart, exit codes a table left
// out). These tests read every `gpuctl ... --help` page, walking the
// subcommands the help itself lists, and hold the README to them:
//   - every gpuctl command line in the README (its sh blocks and its inline
//     code) names commands and flags that exist where it uses them;
//   - every command and every flag the help shows is in the README;
//   - the README's exit code table, client/exit_codes.h and the help's
//     "Exit codes:" lines give the same codes;
//   - every job table the README shows has the columns `train list` prints.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "client/output/job_text.h"
#include "tests/support/readme_code.h"
#include "tests/unit/client/cli_run.h"

namespace gpuctl::client {
namespace {

using readme_code::ReadSourceFile;

// One --help page, as CLI11 prints it: the flags of its "Options:" section
// (long and short names) and the names in its "Subcommands:" section.
struct HelpPage {
  std::string text;
  std::set<std::string> flags;
  std::vector<std::set<std::string>> flag_names;  // one set per option: "-o", "--output"
  std::set<std::string> value_flags;              // those shown with a type (TEXT, UINT...)
  std::vector<std::string> subcommands;
};

HelpPage ReadHelpPage(const std::vector<std::string>& path) {
  std::vector<std::string> args = path;
  args.push_back("--help");
  CliRun run = RunGpuctl(args);
  HelpPage page;
  page.text = run.out;
  EXPECT_EQ(run.code, 0) << "gpuctl --help of '" << ::testing::PrintToString(path) << "': " << run.err;
  static const std::regex option_line(R"(^  (--?[A-Za-z0-9][-A-Za-z0-9,]*)(\s|$)( ?[A-Z])?)");
  static const std::regex subcommand_line(R"(^  ([a-z][-a-z0-9]*)(\s|$))");
  std::istringstream lines(run.out);
  std::string section;
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line[0] != ' ') section = line;
    std::smatch m;
    if (section.rfind("Options", 0) == 0 && std::regex_search(line, m, option_line)) {
      std::stringstream names(m[1].str());
      std::set<std::string>& option = page.flag_names.emplace_back();
      for (std::string name; std::getline(names, name, ',');) {
        page.flags.insert(name);
        option.insert(name);
        if (m[3].matched) page.value_flags.insert(name);
      }
    } else if (section.rfind("Subcommands", 0) == 0 && std::regex_search(line, m, subcommand_line)) {
      page.subcommands.push_back(m[1].str());
    }
  }
  return page;
}

// Every command path ("" is gpuctl itself, "train start"...) -> its page.
using HelpTree = std::map<std::string, HelpPage>;

void WalkHelp(const std::vector<std::string>& path, HelpTree& tree) {
  std::string key;
  for (const std::string& word : path) key += (key.empty() ? "" : " ") + word;
  HelpPage page = ReadHelpPage(path);
  const std::vector<std::string> subcommands = page.subcommands;
  tree[key] = std::move(page);
  for (const std::string& sub : subcommands) {
    std::vector<std::string> deeper = path;
    deeper.push_back(sub);
    WalkHelp(deeper, tree);
  }
}

const HelpTree& Help() {
  static const HelpTree tree = [] {
    HelpTree walked;
    WalkHelp({}, walked);
    return walked;
  }();
  return tree;
}

// Whether FLAG takes a value where PATH uses it (its own or a parent's).
bool TakesValue(const HelpTree& tree, std::string path, const std::string& flag) {
  for (;;) {
    if (tree.at(path).value_flags.count(flag)) return true;
    if (path.empty()) return false;
    const size_t space = path.rfind(' ');
    path = space == std::string::npos ? "" : path.substr(0, space);
  }
}

// Splits a shell line into words: quotes group (their contents are one word,
// never read as flags), # starts a comment.
std::vector<std::string> ShellWords(const std::string& line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (char c : line) {
    if (quote != 0) {
      if (c == quote) quote = 0;
      word += c;
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
      word += c;
      in_word = true;
    } else if (c == ' ' || c == '\t') {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
    } else if (c == '#' && !in_word) {
      break;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(word);
  return words;
}

// The gpuctl command lines the README shows: lines of its sh code blocks and
// the "$ " lines of its other blocks (joined at trailing backslashes, the
// prompt dropped), and inline code spans (also across a line break). A line
// may hold several (`gpuctl node list; gpuctl node rm gpu1`), and gpuctl may
// be a path or inside a substitution (`source <(gpuctl completion bash)`).
// Each command keeps its README line and its words after "gpuctl".
struct ReadmeCommand {
  int line = 0;
  std::vector<std::string> words;
};

bool IsGpuctlWord(const std::string& word) {
  const size_t cut = word.find_last_of("(/\"");
  return word.compare(cut == std::string::npos ? 0 : cut + 1, std::string::npos, "gpuctl") == 0;
}

void AddCommands(const std::string& text, int line, std::vector<ReadmeCommand>& commands) {
  bool open = false;
  for (std::string word : ShellWords(text)) {
    if (IsGpuctlWord(word)) {
      commands.push_back(ReadmeCommand{line, {}});
      open = true;
      continue;
    }
    if (!open) continue;
    // A command ends at a separator, or at a word that ends one (`list;`).
    const bool ends = !word.empty() && (word.back() == ';' || word.back() == ')');
    if (ends) word.pop_back();
    if (word == "|" || word == "||" || word == "&&" || word == ";") {
      open = false;
      continue;
    }
    if (!word.empty()) commands.back().words.push_back(word);
    if (ends) open = false;
  }
  std::erase_if(commands, [](const ReadmeCommand& c) { return c.words.empty(); });
}

std::vector<ReadmeCommand> ReadmeCommands(const std::string& readme) {
  std::vector<ReadmeCommand> commands;
  for (const readme_code::ReadmeCode& code : readme_code::ReadmeCodeLines(readme)) {
    // In prose, only a span that is a gpuctl command (`tmux -L gpuctl
    // kill-server` names a socket).
    if (code.inline_span && code.text.rfind("gpuctl ", 0) != 0) continue;
    AddCommands(code.text, code.line, commands);
  }
  return commands;
}

bool IsFlag(const std::string& word) { return word.size() > 1 && word[0] == '-' && word != "--"; }

// What the README's commands get wrong: "README line N: ..." for a flag that
// is not one of the command's (or a global one), and for a word where the
// command needs a subcommand that is none of its subcommands. Also collects
// every command path they reach.
std::vector<std::string> UnknownCommandWords(const HelpTree& tree, const std::vector<ReadmeCommand>& commands,
                                             std::set<std::string>* reached = nullptr) {
  std::vector<std::string> wrong;
  for (const ReadmeCommand& command : commands) {
    std::string path;
    std::set<std::string> known = tree.at("").flags;
    bool value_next = false;  // the last word was a flag that takes a value
    for (const std::string& word : command.words) {
      if (word == "--" || word[0] == '>' || word[0] == '<' || word.rfind("2>", 0) == 0) break;
      if (value_next) {
        value_next = false;
        continue;
      }
      const std::string deeper = path.empty() ? word : path + " " + word;
      if (tree.count(deeper)) {
        path = deeper;
        if (reached != nullptr) reached->insert(path);
        known.insert(tree.at(path).flags.begin(), tree.at(path).flags.end());
        continue;
      }
      // A hidden command (gpuctl __complete, for the completion script) has
      // no help page to hold it to.
      if (word.rfind("__", 0) == 0) break;
      const std::string where = "README line " + std::to_string(command.line) + ": 'gpuctl " + path + "' ";
      if (!IsFlag(word)) {
        // Where a subcommand must come, a word is one (placeholders such as
        // NAME and ... are values, which only a leaf command takes).
        const bool needs_subcommand = !tree.at(path).subcommands.empty();
        const bool placeholder = word == "..." || word.find_first_of("[]|") != std::string::npos;
        if (needs_subcommand && !placeholder) wrong.push_back(where + "has no subcommand " + word);
        if (needs_subcommand) break;
        continue;
      }
      const std::string flag = word.substr(0, word.find('='));  // --flag=value
      if (!known.count(flag)) {
        wrong.push_back(where + "has no flag " + flag);
        continue;
      }
      value_next = word.find('=') == std::string::npos && TakesValue(tree, path, flag);
    }
  }
  return wrong;
}

TEST(ReadmeHelpTruth, AFlagOrCommandTheProgramLacksIsFound) {
  // The checker itself, on a README of three lines.
  const std::string readme =
      "```sh\n"
      "gpuctl train start --name a --anchors 768 -- python3 t.py --no-such-flag\n"
      "gpuctl train logs -f --tial 5 a\n"
      "```\n"
      "Then `gpuctl train list --state running --watch` and `gpuctl -o json train\nstauts a`.\n";
  std::set<std::string> reached;
  const std::vector<std::string> wrong = UnknownCommandWords(Help(), ReadmeCommands(readme), &reached);
  ASSERT_EQ(wrong.size(), 2u) << ::testing::PrintToString(wrong);
  EXPECT_EQ(wrong[0], "README line 3: 'gpuctl train logs' has no flag --tial");
  EXPECT_EQ(wrong[1], "README line 5: 'gpuctl train' has no subcommand stauts") << "a misspelt command is said too";
  EXPECT_EQ(reached, (std::set<std::string>{"train", "train start", "train logs", "train list"}));
}

TEST(ReadmeHelpTruth, TheHelpTreeIsRead) {
  // The walk itself: a change to CLI11's help layout must not turn every
  // check below into a check of nothing.
  const HelpTree& tree = Help();
  ASSERT_TRUE(tree.count("train start")) << "the walk found no 'train start'";
  EXPECT_TRUE(tree.at("train start").flags.count("--anchors"));
  EXPECT_TRUE(tree.at("").flags.count("--agent"));
  EXPECT_TRUE(tree.at("").flags.count("-o"));
  EXPECT_GT(tree.size(), 25u);
}

TEST(ReadmeHelpTruth, EveryGpuctlLineInTheReadmeUsesCommandsAndFlagsThatExist) {
  const std::vector<ReadmeCommand> commands = ReadmeCommands(ReadSourceFile("README.md"));
  ASSERT_GT(commands.size(), 80u);
  for (const std::string& wrong : UnknownCommandWords(Help(), commands)) ADD_FAILURE() << wrong;
}

TEST(ReadmeHelpTruth, EveryCommandAndFlagTheHelpShowsIsInTheReadme) {
  const std::string readme = ReadSourceFile("README.md");
  std::set<std::string> reached;
  UnknownCommandWords(Help(), ReadmeCommands(readme), &reached);
  for (const auto& [path, page] : Help()) {
    if (!path.empty()) {
      EXPECT_TRUE(reached.count(path)) << "the README shows no 'gpuctl " << path << "' command";
    }
    for (const std::set<std::string>& names : page.flag_names) {
      if (names.count("--help") || names.count("--version")) continue;
      // A flag with a short name may be shown by either (-f, --follow).
      const bool mentioned = std::any_of(names.begin(), names.end(), [&](const std::string& name) {
        return readme_code::MentionsFlag(readme, name);
      });
      EXPECT_TRUE(mentioned) << "'gpuctl " << path << " --help' shows " << *names.begin()
                             << ", which the README never mentions";
    }
  }
}

// The numbers of "Exit codes: 0 ok, 1 ..., 124 ...": each number that starts
// an entry (at the start, or after ", ", "; " or ": ").
std::set<int> ExitCodesIn(const std::string& help) {
  std::set<int> codes;
  const size_t start = help.find("Exit codes:");
  if (start == std::string::npos) return codes;
  // Up to the usage line that follows the description.
  const size_t end = help.find("Usage:", start);
  std::string text = help.substr(start, end - start);
  for (char& c : text) {
    if (c == '\n') c = ' ';
  }
  static const std::regex entry(R"((?:codes:|,|;|:) (\d+) )");
  for (std::sregex_iterator it(text.begin(), text.end(), entry), stop; it != stop; ++it) {
    codes.insert(std::stoi((*it)[1].str()));
  }
  return codes;
}

TEST(ReadmeHelpTruth, ExitCodesAgreeInTheReadmeTheHeaderAndTheHelp) {
  const std::string readme = ReadSourceFile("README.md");
  std::set<int> table;
  {
    const size_t start = readme.find("### Exit codes");
    ASSERT_NE(start, std::string::npos);
    std::istringstream lines(readme.substr(start, readme.find("\n### ", start + 1) - start));
    static const std::regex row(R"(^\| (\d+) \|)");
    for (std::string line; std::getline(lines, line);) {
      std::smatch m;
      if (std::regex_search(line, m, row)) table.insert(std::stoi(m[1].str()));
    }
  }
  std::set<int> header;
  {
    const std::string text = ReadSourceFile("client/exit_codes.h");
    static const std::regex constant(R"(constexpr int kExit\w+ = (\d+);)");
    for (std::sregex_iterator it(text.begin(), text.end(), constant), end; it != end; ++it) {
      header.insert(std::stoi((*it)[1].str()));
    }
  }
  EXPECT_EQ(table, header) << "README's exit code table against client/exit_codes.h";
  EXPECT_EQ(ExitCodesIn(Help().at("").text), header) << "gpuctl --help's exit codes against client/exit_codes.h";
  for (const auto& [path, page] : Help()) {
    for (int code : ExitCodesIn(page.text)) {
      EXPECT_TRUE(header.count(code)) << "'gpuctl " << path << " --help' names exit code " << code
                                      << ", which client/exit_codes.h does not have";
    }
  }
}

TEST(ReadmeHelpTruth, EveryJobTableInTheReadmeHasTheColumnsTrainListPrints) {
  std::vector<std::string> header = JobListHeader();
  std::istringstream lines(ReadSourceFile("README.md"));
  int tables = 0;
  int number = 0;
  for (std::string line; std::getline(lines, line);) {
    ++number;
    std::vector<std::string> words = ShellWords(line);
    if (words.empty() || words.size() < 4) continue;
    const bool job_table = std::find(words.begin(), words.end(), "STATE") != words.end() &&
                           std::find(words.begin(), words.end(), "EVENTS") != words.end() &&
                           std::find(words.begin(), words.end(), "NAME") != words.end();
    if (!job_table) continue;
    ++tables;
    // --nodes adds NODE first; a multinode job's parts add RANK.
    std::erase_if(words, [](const std::string& w) { return w == "NODE" || w == "RANK"; });
    EXPECT_EQ(words, header) << "README line " << number << ": " << line;
  }
  EXPECT_GT(tables, 0);
}

}  // namespace
}  // namespace gpuctl::client
