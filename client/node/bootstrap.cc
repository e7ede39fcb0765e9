#include "client/node/bootstrap.h"

#include <future>
#include <ostream>

#include "agents/sys/clock.h"
#include "agents/sys/files.h"
#include "client/node/agent_config.h"
#include "client/node/agent_over_ssh.h"
#include "client/node/deploy_files.h"
#include "client/node/binary_requirements.h"
#include "client/node/local_gpuctld.h"
#include "client/node/node_fit.h"
#include "client/node/remote_agent_commands.h"
#include "client/ssh/sha256.h"
#include "client/ssh/ssh_session.h"
#include "common/units.h"
#include "common/utf8.h"

namespace gpuctl::client {
namespace {

constexpr const char* kUnitPath = "/etc/systemd/system/gpuctld.service";

// Runs `command`; a non-zero exit is an error that shows what failed.
Result<std::string> RunChecked(ssh::SshSession& session, const std::string& command, const std::string& what) {
  Result<ssh::ExecResult> ran = session.Exec(command);
  if (!ran.ok()) return ran.status();
  if (ran->exit_status != 0) {
    return FailedPrecondition(what + " on " + session.description() + " failed (exit " +
                              std::to_string(ran->exit_status) + "): " + ran->err + ran->out);
  }
  return ran->out;
}

Result<int> ParsePid(const std::string& text, const std::string& what) {
  try {
    int pid = std::stoi(text);
    if (pid > 0) return pid;
  } catch (const std::exception&) {
  }
  return Internal(what + " printed no pid: '" + text + "'");
}

// What the agent wrote last, for errors: why it did not come up.
// Only what this start wrote (since `mark`): an earlier failed start's
// lines would point at a cause that is gone.
std::string LogTail(ssh::SshSession& session, const AgentLayout& layout, bool systemd, uint64_t mark) {
  Result<ssh::ExecResult> tail = session.Exec(LogTailCommand(layout, systemd, mark));
  if (!tail.ok()) return "(cannot read the log: " + tail.status().message() + ")";
  return tail->out.empty() ? "(it wrote nothing to its log)" : tail->out;
}

// LogMarkCommand's number; 0 (the whole log) when it printed none.
uint64_t LogMark(ssh::SshSession& session, const AgentLayout& layout, bool systemd) {
  Result<ssh::ExecResult> mark = session.Exec(LogMarkCommand(layout, systemd));
  if (!mark.ok()) return 0;
  try {
    return std::stoull(mark->out);
  } catch (const std::exception&) {
    return 0;
  }
}

// Polls until the agent's socket exists and GetHealth answers through the
// tunnel; fails early when the process dies.
Result<std::unique_ptr<AgentClient>> WaitUntilAnswers(const std::shared_ptr<ssh::SshSession>& session,
                                                      const AgentLayout& layout, int pid, bool systemd,
                                                      uint64_t log_mark, std::chrono::milliseconds deadline) {
  const sys::RealClock clock;
  auto give_up_at = clock.SteadyNow() + deadline;
  std::string last_error;
  while (clock.SteadyNow() < give_up_at) {
    Result<std::string> readiness = RunChecked(*session, ReadinessCommand(layout, pid), "checking the agent");
    if (!readiness.ok()) return readiness.status();
    if (readiness->rfind("dead", 0) == 0) {
      return Unavailable("gpuctld (pid " + std::to_string(pid) + ") exited right after starting on " +
                         session->description() + "; the end of its log:\n" + LogTail(*session, layout, systemd, log_mark));
    }
    if (readiness->rfind("ready", 0) == 0) {
      Result<std::unique_ptr<AgentClient>> client =
          AgentClientOverSsh(session, layout.socket, std::chrono::seconds(2), layout.binary);
      if (client.ok()) {
        Result<v1::HealthSnapshot> health = (*client)->GetHealth();
        if (health.ok()) return client;
        last_error = health.status().message();
      } else {
        last_error = client.status().message();
      }
    }
    sys::SleepFor(clock, std::chrono::milliseconds(100));
  }
  return Unavailable("gpuctld (pid " + std::to_string(pid) + ") on " + session->description() +
                     " did not answer within " + FormatDuration(deadline) +
                     (last_error.empty() ? "" : " (" + last_error + ")") + "; the end of its log:\n" +
                     LogTail(*session, layout, systemd, log_mark));
}

struct LocalBinary {
  std::string bytes;
  std::string sha256;
};

Result<LocalBinary> ReadAndHash(const std::string& path) {
  Result<std::string> bytes = sys::ReadWholeFile(path);
  if (!bytes.ok()) return bytes.status().Wrap("reading gpuctld");
  std::string sha = ssh::Sha256Hex(*bytes);
  return LocalBinary{.bytes = std::move(*bytes), .sha256 = std::move(sha)};
}

// The agent that runs, if it is ours and answers: the fast path.
std::unique_ptr<AgentClient> AnsweringAgent(const std::shared_ptr<ssh::SshSession>& session,
                                            const AgentLayout& layout) {
  Result<std::unique_ptr<AgentClient>> client =
      AgentClientOverSsh(session, layout.socket, std::chrono::seconds(3), layout.binary);
  if (!client.ok() || !(*client)->GetHealth().ok()) return nullptr;
  return std::move(*client);
}

// Jobs run in tmux: an agent without it cannot start one. Installed with the
// node's package manager, or refused with the command to run.
Status EnsureTmux(ssh::SshSession& session, const RemoteAgentState& state, const BootstrapOptions& options,
                  std::ostream& progress) {
  if (!state.tmux.empty()) return Status::Ok();
  Result<std::string> install = InstallTmuxCommand(state.package_manager);
  std::string node = session.description();
  if (!install.ok()) {
    return FailedPrecondition("tmux, which gpuctld runs jobs in, is not installed on " + node +
                              " and the node has no package manager gpuctl knows (apt-get, dnf, yum, zypper, apk); "
                              "install tmux there and run the bootstrap again");
  }
  if (!options.install_missing || !state.root) {
    return FailedPrecondition("tmux, which gpuctld runs jobs in, is not installed on " + node + "; install it as root (" +
                              *install + ") and run the bootstrap again" +
                              (state.root ? "" : ", or bootstrap as root so gpuctl installs it"));
  }
  progress << "installing tmux on " << node << " (" << state.package_manager << ")\n";
  Result<std::string> installed = RunChecked(session, *install + " 2>&1 && command -v tmux", "installing tmux");
  return installed.ok() ? Status::Ok() : installed.status();
}

}  // namespace

Result<BootstrapResult> BootstrapAgent(std::shared_ptr<ssh::SshSession> session, const BootstrapOptions& options,
                                       std::ostream& progress) {
  const AgentLayout& layout = options.layout;
  Result<std::string> local_path = FindLocalGpuctld(options.gpuctld_path);
  if (!local_path.ok()) return local_path.status();
  // Hashing a gpuctld of tens of MiB takes as long as the node's own
  // sha256sum: do both at once (the thread touches no libssh state).
  std::future<Result<LocalBinary>> hashing = std::async(std::launch::async, ReadAndHash, *local_path);

  Result<std::string> base_config = std::string(DeployedConfigFile());
  if (!options.agent_config.empty()) base_config = sys::ReadWholeFile(options.agent_config);
  if (!base_config.ok()) return base_config.status().Wrap("reading the agent config");
  Result<std::string> config = AgentConfigFor(*base_config, layout);
  if (!config.ok()) return config.status();

  Result<std::string> probed = RunChecked(*session, ProbeCommand(layout), "looking at the node and its agent");
  Result<LocalBinary> binary = hashing.get();
  if (!binary.ok()) return binary.status();
  if (!probed.ok()) return probed.status();
  Result<RemoteAgentState> state = ParseRemoteAgentState(*probed);
  if (!state.ok()) return state.status();
  // Refuse a node that cannot run the binary before a byte is uploaded.
  Result<BinaryRequirements> needs = ReadBinaryRequirements(binary->bytes);
  if (!needs.ok()) return needs.status().Wrap(*local_path);
  if (Status s = CheckNodeCanRun(*needs, *state, session->description()); !s.ok()) return s;
  if (Status s = EnsureTmux(*session, *state, options, progress); !s.ok()) return s;

  const std::string& binary_sha = binary->sha256;
  BootstrapResult result{
      .client = nullptr, .build = binary_sha.substr(0, 12), .changed = false, .pid = 0, .replaced_build = ""};
  bool use_systemd = layout.system() && state->systemd;
  bool running = use_systemd ? state->unit_active : state->pid.has_value();
  bool binary_current = state->binary_sha256 == binary_sha;
  bool config_current = !state->config_sha256.empty() &&
                        (options.agent_config.empty() || state->config_sha256 == ssh::Sha256Hex(*config));
  bool same_build_serves = state->serving_pid && state->serving_sha256 == binary_sha;

  if (binary_current && config_current && (running || same_build_serves)) {
    if (std::unique_ptr<AgentClient> client = AnsweringAgent(session, layout)) {
      progress << "agent answers (build " << EscapeForTerminal(result.build) << ", unchanged)\n";
      result.client = std::move(client);
      result.pid = state->serving_pid.value_or(state->pid.value_or(0));
      return result;
    }
    progress << "gpuctld runs on " << session->description() << " but does not answer; restarting it\n";
  }
  result.changed = true;
  if (Result<std::string> made = RunChecked(*session, MakeDirsCommand(layout), "creating the agent's directories");
      !made.ok()) {
    return made.status();
  }
  if (!binary_current) {
    progress << "uploading gpuctld (" << FormatBytes(binary->bytes.size()) << ") to " << session->description() << ":"
             << layout.binary << "\n";
    if (Status s = session->UploadBytes(binary->bytes, layout.binary, 0755); !s.ok()) return s;
  }
  if (!config_current) {
    progress << "installing " << layout.config << "\n";
    if (Status s = session->UploadBytes(*config, layout.config, 0644); !s.ok()) return s;
  }

  if (state->serving_pid && !same_build_serves) {
    // Another build holds the socket: whatever started it (systemd, a
    // person, an older bootstrap), it goes before ours starts.
    result.replaced_build = state->serving_sha256.substr(0, 12);
    progress << "gpuctld build " << EscapeForTerminal(result.replaced_build) << " (pid " << *state->serving_pid
             << ") serves " << EscapeForTerminal(layout.socket) << "; replacing it with build "
             << EscapeForTerminal(result.build) << "\n";
    std::string stop = (use_systemd ? "systemctl stop gpuctld 2>/dev/null; " : "") + StopPidCommand(*state->serving_pid);
    if (Result<std::string> stopped = RunChecked(*session, stop, "stopping the agent of another build");
        !stopped.ok()) {
      return stopped.status();
    }
  }

  const uint64_t log_mark = LogMark(*session, layout, use_systemd);
  Result<std::string> started = Status();
  if (use_systemd) {
    if (Status s = session->UploadBytes(DeployedUnitFile(), kUnitPath, 0644); !s.ok()) return s;
    started = RunChecked(*session, StartSystemdCommand(), "starting gpuctld with systemd");
  } else {
    if (state->pid) {
      progress << "stopping gpuctld (pid " << *state->pid << ")\n";
      if (Result<std::string> stopped = RunChecked(*session, StopPidCommand(*state->pid), "stopping the old agent");
          !stopped.ok()) {
        return stopped.status();
      }
    }
    started = RunChecked(*session, StartDetachedCommand(layout), "starting gpuctld");
  }
  if (!started.ok()) return started.status();
  Result<int> pid = ParsePid(*started, "starting gpuctld");
  if (!pid.ok()) return pid.status();
  result.pid = *pid;
  progress << "started gpuctld (pid " << *pid << (use_systemd ? ", systemd" : "") << ")\n";

  Result<std::unique_ptr<AgentClient>> client =
      WaitUntilAnswers(session, layout, *pid, use_systemd, log_mark, options.answer_deadline);
  if (!client.ok()) return client.status();
  progress << "agent answers (build " << EscapeForTerminal(result.build) << ")\n";
  result.client = std::move(*client);
  return result;
}

}  // namespace gpuctl::client
