#include "client/commands/completion_command.h"

#include <map>
#include <memory>
#include <ostream>
#include <vector>

namespace gpuctl::client {
namespace {

// The long and short names of an option as typed ("--agent", "-o"); a
// positional has none.
std::vector<std::string> FlagNames(const CLI::Option& option) {
  std::vector<std::string> names;
  for (const std::string& name : option.get_lnames()) names.push_back("--" + name);
  for (const std::string& name : option.get_snames()) names.push_back("-" + name);
  return names;
}

// Command path (" train start", "" for the top) -> the words offered there.
void Collect(const CLI::App& app, const std::string& path, const std::vector<std::string>& global_flags,
             std::map<std::string, std::vector<std::string>>& words) {
  std::vector<std::string>& here = words[path];
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    here.push_back(sub->get_name());
  }
  for (const CLI::Option* option : app.get_options()) {
    for (const std::string& name : FlagNames(*option)) here.push_back(name);
  }
  if (!path.empty()) here.insert(here.end(), global_flags.begin(), global_flags.end());
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    Collect(*sub, path + " " + sub->get_name(), global_flags, words);
  }
}

std::string Join(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& word : words) out += (out.empty() ? "" : " ") + word;
  return out;
}

}  // namespace

std::string BashCompletionScript(const CLI::App& app) {
  std::vector<std::string> global_flags;
  for (const CLI::Option* option : app.get_options()) {
    if (option->get_name() == "--help" || option->get_name() == "--version") continue;
    for (const std::string& name : FlagNames(*option)) global_flags.push_back(name);
  }
  std::map<std::string, std::vector<std::string>> words;
  Collect(app, "", global_flags, words);

  // Every word is a command or flag name from the tree ([A-Za-z0-9-]), so
  // nothing here needs quoting beyond the double quotes around paths.
  std::string script =
      "# gpuctl bash completion: source it, or save it as\n"
      "# /etc/bash_completion.d/gpuctl (gpuctl completion bash > ...).\n"
      "_gpuctl() {\n"
      "  local cur=${COMP_WORDS[COMP_CWORD]} path= i\n"
      "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      "    [ \"${COMP_WORDS[i]}\" = -- ] && return 0\n"
      "    case \"$path ${COMP_WORDS[i]}\" in\n";
  std::string paths;
  for (const auto& [path, offered] : words) {
    if (!path.empty()) paths += (paths.empty() ? "" : "|") + std::string("\"") + path + "\"";
  }
  script += "      " + paths + ") path=\"$path ${COMP_WORDS[i]}\" ;;\n";
  script +=
      "    esac\n"
      "  done\n"
      "  local words\n"
      "  case \"$path\" in\n";
  for (const auto& [path, offered] : words) {
    script += "    \"" + path + "\") words=\"" + Join(offered) + "\" ;;\n";
  }
  script +=
      "  esac\n"
      "  COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
      "}\n"
      "complete -o default -F _gpuctl gpuctl\n";
  return script;
}

std::string ZshCompletionScript(const CLI::App& app) {
  return "# gpuctl zsh completion: source it from ~/.zshrc (source <(gpuctl completion zsh)).\n"
         "autoload -U +X compinit && compinit\n"
         "autoload -U +X bashcompinit && bashcompinit\n" +
         BashCompletionScript(app);
}

void AddCompletionCommand(CLI::App& app, CommandContext& context) {
  auto shell = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "completion",
      "Print a shell completion script: source <(gpuctl completion bash), or for zsh: source <(gpuctl completion zsh)");
  cmd->add_option("shell", *shell, "bash or zsh")->required()->check(CLI::IsMember({"bash", "zsh"}));
  cmd->callback([&context, &app, shell] {
    context.console.out << (*shell == "zsh" ? ZshCompletionScript(app) : BashCompletionScript(app));
  });
}

}  // namespace gpuctl::client
