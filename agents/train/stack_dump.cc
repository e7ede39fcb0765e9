#include "agents/train/stack_dump.h"

#include <spdlog/spdlog.h>

#include "agents/sys/clock.h"
#include "agents/sys/directory_listing.h"
#include "agents/sys/files.h"
#include "agents/sys/text_fields.h"
#include "agents/train/launch_command.h"

namespace gpuctl::train {
namespace {

constexpr std::chrono::seconds kPySpyTimeout{15};
// How long NCCL's watchdog gets to write its dump once asked.
constexpr std::chrono::seconds kNcclDumpWait{3};

std::string DirName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

bool LooksLikePython(const RunProcess& p) {
  if (p.comm.rfind("python", 0) == 0 || p.comm.rfind("pt_", 0) == 0 || p.comm == "torchrun") return true;
  if (p.argv.empty()) return false;
  std::string base = p.argv[0].substr(p.argv[0].rfind('/') + 1);
  return base.rfind("python", 0) == 0;
}

// Asks each NCCL debug pipe of the job for a dump: NCCL's watchdog, where it
// runs, writes its flight recorder then. A pipe with no reader is skipped.
int PokeNcclPipes(const std::string& job_dir) {
  int poked = 0;
  for (const std::string& name : sys::ListDirectoryNames(job_dir)) {
    if (name.rfind(kNcclPipePrefix, 0) != 0) continue;
    if (sys::WriteToFifoIfRead(job_dir + "/" + name, "1\n")) ++poked;
  }
  return poked;
}

}  // namespace

std::string TopPythonFrame(const std::string& out) {
  bool in_thread = false;
  for (std::string_view line : sys::Lines(out)) {
    if (line.rfind("Thread ", 0) == 0) {
      in_thread = true;
      continue;
    }
    if (in_thread && !line.empty() && (line[0] == ' ' || line[0] == '\t')) return std::string(sys::Trim(line));
  }
  return "";
}

ProcStackDumper::ProcStackDumper(const sys::HostFs& fs, sys::CommandRunner& runner, const sys::Clock& clock,
                                 std::string agent_path)
    : fs_(fs), runner_(runner), clock_(clock), agent_path_(std::move(agent_path)) {}

std::string ProcStackDumper::FindPySpy(const JobRecord& record, const RunProcess& process) const {
  std::vector<std::string> dirs;
  if (auto venv = record.spec.env.find("VIRTUAL_ENV"); venv != record.spec.env.end() && record.spec.container.empty()) {
    dirs.push_back(venv->second + "/bin");
  }
  // A container job's paths are the container's, not this host's: only
  // the agent's own PATH is looked in for it.
  if (record.spec.container.empty()) {
    if (!process.argv.empty() && process.argv[0].rfind('/', 0) == 0) dirs.push_back(DirName(process.argv[0]));
    if (!record.spec.command.empty() && record.spec.command[0].rfind('/', 0) == 0) {
      dirs.push_back(DirName(record.spec.command[0]));
    }
  }
  for (const std::string& dir : dirs) {
    std::string candidate = dir + "/py-spy";
    if (sys::IsExecutableFile(candidate)) return candidate;
  }
  return sys::FindExecutable("py-spy", agent_path_);
}

std::string ProcStackDumper::DumpOne(const JobRecord& record, const RunProcess& p, ProcessDump& out) {
  const std::string proc = "proc/" + std::to_string(p.pid);
  std::string text = "pid: " + std::to_string(p.pid) + "\n";
  if (p.rank) text += "rank: " + std::to_string(*p.rank) + "\n";
  text += "comm: " + p.comm + "\nstate: " + std::string(1, p.state) + "\n";
  text += "cpu_ticks: " + std::to_string(p.cpu_ticks) + "\n";
  text += "argv:";
  for (const std::string& a : p.argv) text += " " + a;
  text += "\n";
  Result<std::string> wchan = fs_.ReadFile(proc + "/wchan");
  text += "wchan: " + (wchan.ok() ? *wchan : "(unreadable: " + wchan.status().message() + ")") + "\n";
  out.method = "kernel stack";
  if (LooksLikePython(p)) {
    std::string py_spy = FindPySpy(record, p);
    if (py_spy.empty()) {
      text += "\npy-spy: not found (in the job's venv or on PATH); install it with `uv pip install py-spy`\n";
    } else {
      sys::RunOptions options;
      options.timeout = kPySpyTimeout;
      options.max_output_bytes = 1 << 20;
      Result<sys::CommandOutput> dumped =
          runner_.Run({py_spy, "dump", "--pid", std::to_string(p.pid), "--nonblocking"}, options);
      if (dumped.ok() && dumped->exit_code == 0) {
        text += "\npython stack (" + py_spy + " dump --nonblocking):\n" + dumped->stdout_text;
        out.method = "py-spy";
        out.top_frame = TopPythonFrame(dumped->stdout_text);
      } else {
        text += "\npy-spy failed: " +
                (dumped.ok() ? "exit " + std::to_string(dumped->exit_code) + ": " + dumped->stderr_text
                             : dumped.status().message()) +
                "\n";
      }
    }
  }
  Result<std::string> stack = fs_.ReadFile(proc + "/stack");
  text += "\nkernel stack:\n" + (stack.ok() ? *stack : "(unreadable: " + stack.status().message() + ")\n");
  return text;
}

void ProcStackDumper::CollectNcclTraces(const JobRecord& record, const std::string& dir, StackDump& dump) {
  const std::string job_dir = DirName(record.log_path);
  if (job_dir.empty()) return;
  if (PokeNcclPipes(job_dir) > 0) sys::SleepFor(clock_, kNcclDumpWait);
  for (const std::string& name : sys::ListDirectoryNames(job_dir)) {
    if (name.rfind(kNcclTracePrefix, 0) != 0) continue;
    Result<std::string> trace = sys::ReadRegularFile(job_dir + "/" + name, 64 << 20);
    if (!trace.ok()) continue;
    if (sys::WriteFileAtomic(dir + "/" + name, *trace, 0600).ok()) dump.files.push_back(name);
  }
}

StackDump ProcStackDumper::Dump(const JobRecord& record, const std::vector<RunProcess>& processes,
                                const std::string& dir) {
  StackDump dump;
  dump.dir = dir;
  if (Status s = sys::EnsureDir(dir, 0700); !s.ok()) {
    dump.error = s.message();
    return dump;
  }
  std::string summary;
  for (const RunProcess& p : processes) {
    ProcessDump one;
    one.pid = p.pid;
    one.rank = p.rank;
    one.state = p.state;
    one.file = (p.rank ? "rank" + std::to_string(*p.rank) + "-" : std::string()) + "pid" + std::to_string(p.pid) +
               ".txt";
    std::string text = DumpOne(record, p, one);
    if (sys::WriteFileAtomic(dir + "/" + one.file, text, 0600).ok()) dump.files.push_back(one.file);
    summary += "pid " + std::to_string(p.pid) + (p.rank ? " rank " + std::to_string(*p.rank) : std::string()) +
               " state " + std::string(1, p.state) + " " + p.comm + ": " + one.method +
               (one.top_frame.empty() ? std::string() : ", at " + one.top_frame) + "\n";
    dump.processes.push_back(std::move(one));
  }
  if (processes.empty()) summary = "no process of the run was found\n";
  CollectNcclTraces(record, dir, dump);
  if (sys::WriteFileAtomic(dir + "/summary.txt", summary, 0600).ok()) dump.files.push_back("summary.txt");
  return dump;
}

}  // namespace gpuctl::train
