// A CommandRunner that answers from a script: an exact argv first, then
// argv[0], else kNotFound as for a program that is not installed. Records
// every call with its options. Thread-safe.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "agents/sys/command_runner.h"

namespace gpuctl::testing {

class FakeCommandRunner final : public sys::CommandRunner {
 public:
  struct Call {
    std::vector<std::string> argv;
    sys::RunOptions options;
  };

  Result<sys::CommandOutput> Run(const std::vector<std::string>& argv, const sys::RunOptions& options) override {
    std::lock_guard lock(mutex_);
    calls_.push_back({argv, options});
    if (auto it = by_argv_.find(argv); it != by_argv_.end()) return it->second;
    if (!argv.empty()) {
      if (auto it = by_program_.find(argv[0]); it != by_program_.end()) return it->second;
    }
    return NotFound("'" + (argv.empty() ? std::string() : argv[0]) +
                    "' not found (FakeCommandRunner has no script for it)");
  }

  // What running exactly `argv` gives.
  void SetResult(std::vector<std::string> argv, Result<sys::CommandOutput> result) {
    std::lock_guard lock(mutex_);
    by_argv_.insert_or_assign(std::move(argv), std::move(result));
  }
  // What running `program` with any arguments gives (when no exact argv matches).
  void SetProgramResult(std::string program, Result<sys::CommandOutput> result) {
    std::lock_guard lock(mutex_);
    by_program_.insert_or_assign(std::move(program), std::move(result));
  }
  // Shorthand for a program that ran and exited.
  static sys::CommandOutput Output(int exit_code, std::string out, std::string err = "") {
    sys::CommandOutput o;
    o.exit_code = exit_code;
    o.stdout_text = std::move(out);
    o.stderr_text = std::move(err);
    return o;
  }

  std::vector<Call> calls() const {
    std::lock_guard lock(mutex_);
    return calls_;
  }
  std::vector<std::vector<std::string>> argvs() const {
    std::lock_guard lock(mutex_);
    std::vector<std::vector<std::string>> out;
    for (const Call& c : calls_) out.push_back(c.argv);
    return out;
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::vector<std::string>, Result<sys::CommandOutput>> by_argv_;
  std::map<std::string, Result<sys::CommandOutput>> by_program_;
  std::vector<Call> calls_;
};

}  // namespace gpuctl::testing
