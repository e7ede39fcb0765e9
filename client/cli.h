// gpuctl's command line: global flags, one subcommand per capability.
// RunCli is main() without the process: tests call it with their own streams.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace gpuctl::client {

enum class OutputFormat { kText, kJson };

// Flags every command shares, filled before a subcommand runs.
struct GlobalOptions {
  std::string agent;  // as given; resolved with $GPUCTL_AGENT and the default
  std::string node;   // --node NAME (or $GPUCTL_NODE): reach that node's agent over SSH
  // --nodes all|NAME,NAME|@KEY=VALUE: ask many nodes at once (client/fleet).
  std::string nodes;
  int concurrency = 16;            // --concurrency: nodes asked at once
  std::string node_timeout = "20s";  // --node-timeout: per node
  bool accept_new_host_key = false;  // record an unknown SSH host key instead of refusing it
  std::string output = "text";
  // Mutual TLS for TCP agents (--tls-ca/--tls-cert/--tls-key, $GPUCTL_TLS_*).
  std::string tls_ca, tls_cert, tls_key, tls_server_name;
  OutputFormat format() const { return output == "json" ? OutputFormat::kJson : OutputFormat::kText; }
  bool json() const { return format() == OutputFormat::kJson; }
};

// Where a command writes; stdout_is_terminal enables screen clearing in --watch.
struct Console {
  std::ostream& out;
  std::ostream& err;
  bool stdout_is_terminal = false;
};

// Returns the process exit code (client/exit_codes.h).
int RunCli(const std::vector<std::string>& args, Console& console, const std::string& env_agent);

}  // namespace gpuctl::client
