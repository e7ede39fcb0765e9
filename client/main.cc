// gpuctl: the command-line client.
#include <iostream>

#include <grpc/support/log.h>

#include "agents/sys/environment.h"
#include "agents/sys/terminal.h"
#include "client/cli.h"

int main(int argc, char** argv) {
  // gRPC's own log lines (e.g. "Handshake failed") repeat, less clearly, the
  // error gpuctl prints itself.
  gpr_set_log_function([](gpr_log_func_args*) {});
  std::vector<std::string> args(argv + 1, argv + argc);
  gpuctl::client::Console console{std::cout, std::cerr, gpuctl::sys::StdoutIsTerminal()};
  return gpuctl::client::RunCli(args, console, gpuctl::sys::EnvironmentVariable("GPUCTL_AGENT").value_or(""));
}
