// gpuctl: the command-line client.
#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include <grpc/support/log.h>

#include "client/cli.h"

int main(int argc, char** argv) {
  // gRPC's own log lines (e.g. "Handshake failed") repeat, less clearly, the
  // error gpuctl prints itself.
  gpr_set_log_function([](gpr_log_func_args*) {});
  std::vector<std::string> args(argv + 1, argv + argc);
  gpuctl::client::Console console{std::cout, std::cerr, isatty(STDOUT_FILENO) == 1};
  const char* env_agent = std::getenv("GPUCTL_AGENT");
  return gpuctl::client::RunCli(args, console, env_agent ? env_agent : "");
}
