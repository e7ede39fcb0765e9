#include "client/ssh/terminal_exec.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "client/ssh/shell_quote.h"

namespace gpuctl::client::ssh {

std::vector<std::string> SshTerminalArgv(const SshTarget& target, bool accept_new_host_key,
                                         const std::vector<std::string>& remote_argv) {
  std::vector<std::string> argv = {"ssh", "-t"};
  if (target.port) argv.insert(argv.end(), {"-p", std::to_string(*target.port)});
  if (!target.identity_file.empty()) argv.insert(argv.end(), {"-i", target.identity_file});
  if (accept_new_host_key) argv.insert(argv.end(), {"-o", "StrictHostKeyChecking=accept-new"});
  // "--": a host is never read as an option, whatever nodes.json says.
  argv.push_back("--");
  argv.push_back(target.user.empty() ? target.host : target.user + "@" + target.host);
  // ssh joins the words with spaces for the remote shell: one quoted string.
  argv.push_back(ShellJoin(remote_argv));
  return argv;
}

Status ExecReplacingProcess(const std::vector<std::string>& argv) {
  if (argv.empty()) return InvalidArgument("nothing to run");
  std::vector<char*> c_argv;
  for (const std::string& word : argv) c_argv.push_back(const_cast<char*>(word.c_str()));
  c_argv.push_back(nullptr);
  execvp(c_argv[0], c_argv.data());
  int error = errno;
  std::string why = "cannot run " + argv[0] + ": " + std::strerror(error);
  if (error == ENOENT) return Status(ErrorCode::kNotFound, why + " (is it installed and on PATH?)");
  return IoError(why);
}

}  // namespace gpuctl::client::ssh
