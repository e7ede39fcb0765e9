// gpuctl train dump NAME: every process of a running job's stacks, now, as
// a hang would dump them (py-spy per Python process, else the kernel's
// stack and wchan; NCCL's flight recorder where it runs), into a new
// directory on the job's host.
#include <algorithm>
#include <memory>
#include <ostream>

#include <nlohmann/json.hpp>

#include "client/commands/command_context.h"
#include "client/commands/train_subcommands.h"
#include "common/job_name.h"
#include "common/json_text.h"
#include "common/utf8.h"

namespace gpuctl::client {
namespace {

void RunDump(CommandContext& ctx, const std::string& name) {
  if (Status s = ValidateJobName(name); !s.ok()) return ctx.Fail(s);
  auto agent = ctx.ConnectAgent();
  if (!agent.ok()) return ctx.Fail(agent.status());
  Result<v1::DumpJobResponse> dump = (*agent)->DumpJob(name);
  if (!dump.ok()) return ctx.Fail(dump.status().Wrap("dumping job " + name));
  if (ctx.global.format() == OutputFormat::kJson) {
    nlohmann::json files = nlohmann::json::array();
    for (const std::string& f : dump->files()) files.push_back(f);
    ctx.console.out << DumpJson({{"dump_dir", dump->dump_dir()}, {"files", files}, {"summary", dump->summary()}})
                    << "\n";
    return;
  }
  // One line per process; each escaped on its own (a comm or a frame is
  // the job's text), the line breaks kept.
  const std::string& summary = dump->summary();
  for (size_t at = 0; at < summary.size();) {
    size_t end = std::min(summary.find('\n', at), summary.size());
    ctx.console.out << EscapeForTerminal(summary.substr(at, end - at)) << "\n";
    at = end + 1;
  }
  ctx.console.out << "stacks of job " << EscapeForTerminal(name) << " in "
                  << EscapeForTerminal(dump->dump_dir()) << " (" << dump->files_size() << " files)\n";
}

}  // namespace

void AddTrainDumpCommand(CLI::App& train, CommandContext& context) {
  auto name = std::make_shared<std::string>();
  CLI::App* cmd = train.add_subcommand("dump", "Dump a running job's stacks now (py-spy, kernel stacks, NCCL's flight recorder)");
  cmd->footer(
      "Writes one file per process of the job, and summary.txt, into a new directory under the job's on its\n"
      "host (STATE_DIR/jobs/NAME/dumps/RUN-TIME), the bundle a hang leaves. py-spy is looked for in the job's\n"
      "venv, then on the agent's PATH. Exit 2 when the job is not running, 1 when no job NAME exists.");
  cmd->add_option("name", *name, "The job's name")->required()->type_name("NAME");
  cmd->callback([&context, name] { RunDump(context, *name); });
}

}  // namespace gpuctl::client
