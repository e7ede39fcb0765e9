// A real gpuctld with its own tmux server for job tests; the tmux server is
// killed at the end so no session outlives the test.
#pragma once

#include <nlohmann/json.hpp>

#include "tests/integration/agent_fixture.h"

namespace gpuctl::testing {

class TrainFixture : public AgentFixture {
 protected:
  void SetUp() override;
  void TearDown() override;

  // Flags that make gpuctld use this test's tmux server and the stand-in pct.
  std::vector<std::string> AgentFlags() const;
  void StartTrainAgent() { StartAgent(AgentFlags(), AgentEnv()); }
  std::map<std::string, std::string> AgentEnv() const;

  // `gpuctl -o json train status NAME`, parsed.
  nlohmann::json Status(const std::string& name) const;
  // Polls until the job's state is not starting/running.
  nlohmann::json WaitForEnd(const std::string& name, std::chrono::milliseconds timeout = std::chrono::seconds(30));
  std::string ToyTrain() const { return std::string(GPUCTL_SOURCE_DIR) + "/examples/train/toy_train.py"; }
  std::string ReadFile(const std::string& path) const;
  bool TmuxHasSession(const std::string& session) const;

  std::string tmux_socket_;
};

}  // namespace gpuctl::testing
