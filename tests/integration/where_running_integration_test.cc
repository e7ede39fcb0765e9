// Issue 24: on one machine `health` said "in docker" and `probe` said "host".
// Against the real agent on whatever machine runs this, both now give the
// same answer, in JSON and in words.
#include <nlohmann/json.hpp>

#include "tests/integration/agent_fixture.h"

namespace gpuctl::testing {
namespace {

using nlohmann::json;

class WhereRunningIntegration : public AgentFixture {};

TEST_F(WhereRunningIntegration, HealthAndProbeAgreeOnThisMachine) {
  StartAgent();
  RunResult health = Gpuctl({"-o", "json", "health"});
  ASSERT_EQ(health.exit_code, 0) << health.err;
  RunResult probe = Gpuctl({"-o", "json", "probe"});
  ASSERT_EQ(probe.exit_code, 0) << probe.err;
  json health_where = json::parse(health.out)["host"]["where"];
  json probe_where = json::parse(probe.out)["where"];
  EXPECT_EQ(health_where, probe_where);
  EXPECT_NE(health_where["kind"], "unknown");
  EXPECT_FALSE(health_where["evidence"].empty());
  // The older fields follow it.
  const bool lxc = health_where["kind"] == "lxc";
  EXPECT_EQ(json::parse(probe.out)["lxc_guest"].get<bool>(), lxc);
  const bool container = health_where["kind"] != "vm" && health_where["kind"] != "bare-metal";
  EXPECT_EQ(json::parse(health.out)["host"]["container"] == "none", !container);

  // In words: what ends health's host line is what probe's os line says after
  // the OS name (a Proxmox host adds ", Proxmox host (...)" after it).
  RunResult health_text = Gpuctl({"health"});
  RunResult probe_text = Gpuctl({"probe"});
  ASSERT_EQ(health_text.exit_code, 0) << health_text.err;
  ASSERT_EQ(probe_text.exit_code, 0) << probe_text.err;
  std::string host_line = health_text.out.substr(0, health_text.out.find('\n'));
  std::string words = host_line.substr(host_line.rfind("  ") + 2);
  std::string os_line = probe_text.out.substr(0, probe_text.out.find('\n')) + ",";
  EXPECT_NE(os_line.find(", " + words + ","), std::string::npos) << host_line << "\n" << os_line;
}

}  // namespace
}  // namespace gpuctl::testing
