#include "client/commands/completion_command.h"

#include <map>
#include <memory>
#include <ostream>
#include <vector>

#include "client/job_state_filter.h"
#include "client/node/node_store.h"
#include "common/job_name.h"

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

// The subcommands a user is shown: not the hidden ones (__complete).
std::vector<const CLI::App*> ShownSubcommands(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App* sub) { return sub->get_name().rfind("__", 0) != 0; });
}

// Command path (" train start", "" for the top) -> the words offered there.
void Collect(const CLI::App& app, const std::string& path, const std::vector<std::string>& global_flags,
             std::map<std::string, std::vector<std::string>>& words) {
  std::vector<std::string>& here = words[path];
  for (const CLI::App* sub : ShownSubcommands(app)) here.push_back(sub->get_name());
  for (const CLI::Option* option : app.get_options()) {
    for (const std::string& name : FlagNames(*option)) here.push_back(name);
  }
  if (!path.empty()) here.insert(here.end(), global_flags.begin(), global_flags.end());
  for (const CLI::App* sub : ShownSubcommands(app)) Collect(*sub, path + " " + sub->get_name(), global_flags, words);
}

// The command paths whose NAME argument is a job, and those whose is a node.
constexpr const char* kJobNamePaths[] = {" train status", " train logs", " train stop", " train rm",
                                         " train wait",   " train attach", " train dump"};
constexpr const char* kNodeNamePaths[] = {" node rm", " node bootstrap", " provision node"};

std::string CasePattern(const auto& paths) {
  std::string pattern;
  for (const char* path : paths) pattern += (pattern.empty() ? "" : "|") + std::string("\"") + path + "\"";
  return pattern;
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
  std::string states;
  for (const std::string& state : JobStateWords()) states += (states.empty() ? "" : " ") + state;
  // Job and node names come from gpuctl itself (__complete): the agent for
  // jobs (the same --node/--agent as the line typed), nodes.json for nodes.
  // Never longer than 2 s, so a lost agent never hangs the shell; names
  // only ever [A-Za-z0-9._-] (__complete filters), safe unquoted.
  std::string script =
      "# gpuctl bash completion: source it, or save it as\n"
      "# /etc/bash_completion.d/gpuctl (gpuctl completion bash > ...).\n"
      "_gpuctl_ask() {\n"
      "  local limit=\n"
      "  command -v timeout >/dev/null 2>&1 && limit=\"timeout -k 1 2\"\n"
      "  $limit \"${COMP_WORDS[0]}\" \"${reach[@]}\" __complete \"$1\" 2>/dev/null </dev/null\n"
      "}\n"
      "_gpuctl() {\n"
      "  local cur=${COMP_WORDS[COMP_CWORD]} prev= path= i reach=()\n"
      "  ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD-1]}\n"
      "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      "    [ \"${COMP_WORDS[i]}\" = -- ] && return 0\n"
      "    case \"${COMP_WORDS[i]}\" in\n"
      "      --node|--agent) reach+=(\"${COMP_WORDS[i]}\" \"${COMP_WORDS[i+1]}\") ;;\n"
      "      --node=*|--agent=*) reach+=(\"${COMP_WORDS[i]}\") ;;\n"
      "    esac\n"
      "    case \"$path ${COMP_WORDS[i]}\" in\n";
  std::string paths;
  for (const auto& [path, offered] : words) {
    if (!path.empty()) paths += (paths.empty() ? "" : "|") + std::string("\"") + path + "\"";
  }
  script += "      " + paths + ") path=\"$path ${COMP_WORDS[i]}\" ;;\n";
  script +=
      "    esac\n"
      "  done\n"
      "  case \"$prev\" in\n"
      "    -o|--output) COMPREPLY=($(compgen -W \"text json\" -- \"$cur\")); return 0 ;;\n"
      "    --node) COMPREPLY=($(compgen -W \"$(_gpuctl_ask nodes)\" -- \"$cur\")); return 0 ;;\n"
      "    --nodes) COMPREPLY=($(compgen -W \"all $(_gpuctl_ask nodes)\" -- \"$cur\")); return 0 ;;\n"
      "    --state) COMPREPLY=($(compgen -W \"" + states + "\" -- \"$cur\")); return 0 ;;\n"
      "  esac\n"
      "  if [[ $cur != -* ]]; then\n"
      "    case \"$path\" in\n"
      "      " + CasePattern(kJobNamePaths) + ")\n"
      "        COMPREPLY=($(compgen -W \"$(_gpuctl_ask jobs)\" -- \"$cur\")); return 0 ;;\n"
      "      " + CasePattern(kNodeNamePaths) + ")\n"
      "        COMPREPLY=($(compgen -W \"$(_gpuctl_ask nodes)\" -- \"$cur\")); return 0 ;;\n"
      "    esac\n"
      "  fi\n"
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

namespace {

// `gpuctl __complete jobs|nodes`: the names the script offers, one a line,
// only those of the names' own grammar (an agent's answer is not trusted to
// be fit for a shell). Nothing, and exit 0, when they cannot be had.
void PrintCompletionNames(CommandContext& context, const std::string& what) {
  std::vector<std::string> names;
  if (what == "nodes") {
    Result<std::vector<Node>> nodes = DefaultNodeStore().List();
    if (nodes.ok()) {
      for (const Node& node : *nodes) names.push_back(node.name);
    }
  } else {
    context.global.nodes.clear();
    auto agent = context.ConnectAgent();
    if (!agent.ok()) return;
    Result<v1::ListJobsResponse> jobs = (*agent)->ListJobs();
    if (!jobs.ok()) return;
    for (const v1::Job& job : jobs->jobs()) names.push_back(job.spec().name());
  }
  for (const std::string& name : names) {
    if (ValidateJobName(name).ok()) context.console.out << name << "\n";
  }
}

}  // namespace

void AddCompletionCommand(CLI::App& app, CommandContext& context) {
  auto what = std::make_shared<std::string>();
  // Hidden (no group): for the completion script only.
  CLI::App* names = app.add_subcommand("__complete", "Names for the completion script")->group("");
  names->add_option("what", *what, "jobs or nodes")->required()->check(CLI::IsMember({"jobs", "nodes"}));
  names->callback([&context, what] { PrintCompletionNames(context, *what); });

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
