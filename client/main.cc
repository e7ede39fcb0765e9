// gpuctl: the command-line client.
#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "client/cli.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  gpuctl::client::Console console{std::cout, std::cerr, isatty(STDOUT_FILENO) == 1};
  const char* env_agent = std::getenv("GPUCTL_AGENT");
  return gpuctl::client::RunCli(args, console, env_agent ? env_agent : "");
}
