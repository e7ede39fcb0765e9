// `health` and `probe` print where the agent runs in the same words, from the
// same field, with the evidence in `probe` and in both JSON forms.
#include <gtest/gtest.h>

#include "client/output/health_json.h"
#include "client/output/health_text.h"
#include "client/output/probe_json.h"
#include "client/output/probe_text.h"
#include "client/output/where_running_output.h"

namespace gpuctl::client {
namespace {

// The machine of issue 24, as its agent answers now.
v1::WhereRunning StaleDockerenvVm() {
  v1::WhereRunning where;
  where.set_kind(v1::WHERE_KIND_VM);
  for (const char* why : {"cpu flag hypervisor", "pid 1 cgroup /", "root fs ext4",
                          "/.dockerenv ignored: nothing else says container"}) {
    where.add_evidence(why);
  }
  return where;
}

std::string HealthHostLine(const v1::WhereRunning& where, v1::ContainerKind container) {
  v1::HealthSnapshot s;
  s.mutable_host()->set_hostname("node1");
  s.mutable_host()->set_container(container);
  *s.mutable_host()->mutable_where() = where;
  std::string text = HealthToText(s);
  return text.substr(0, text.find('\n'));
}

std::string ProbeOsAndWhereLines(const v1::WhereRunning& where) {
  v1::HostProbe p;
  p.set_os_pretty_name("Debian GNU/Linux 12 (bookworm)");
  *p.mutable_where() = where;
  std::string text = ProbeToText(p);
  return text.substr(0, text.find("\nkernel"));
}

TEST(WhereRunningOutput, HealthAndProbeSayTheSameWordsForEveryKind) {
  struct Case {
    v1::WhereKind kind;
    const char* hypervisor;
    const char* words;
  };
  for (const Case& c : {Case{v1::WHERE_KIND_BARE_METAL, "", "bare metal"}, Case{v1::WHERE_KIND_VM, "", "VM"},
                        Case{v1::WHERE_KIND_VM, "KVM", "VM (KVM)"},
                        Case{v1::WHERE_KIND_DOCKER, "QEMU", "Docker container"},
                        Case{v1::WHERE_KIND_PODMAN, "", "Podman container"}, Case{v1::WHERE_KIND_LXC, "", "LXC guest"},
                        Case{v1::WHERE_KIND_OTHER_CONTAINER, "", "container"}}) {
    v1::WhereRunning where;
    where.set_kind(c.kind);
    where.set_hypervisor(c.hypervisor);
    where.add_evidence("some clue");
    EXPECT_EQ(WhereRunningText(where), c.words);
    std::string health = HealthHostLine(where, v1::CONTAINER_KIND_NONE);
    EXPECT_TRUE(health.ends_with(std::string("  ") + c.words)) << health;
    EXPECT_NE(ProbeOsAndWhereLines(where).find(std::string("bookworm), ") + c.words + "\n"), std::string::npos)
        << ProbeOsAndWhereLines(where);
  }
}

// Before: health said "in docker" (the marker) and probe "host" (not LXC).
TEST(WhereRunningOutput, AVmWithAStaleDockerenvIsAVmInBothWithTheEvidenceInProbe) {
  v1::WhereRunning where = StaleDockerenvVm();
  std::string health = HealthHostLine(where, v1::CONTAINER_KIND_NONE);
  EXPECT_TRUE(health.ends_with("  VM")) << health;
  EXPECT_EQ(health.find("docker"), std::string::npos) << health;
  EXPECT_EQ(ProbeOsAndWhereLines(where),
            "os        Debian GNU/Linux 12 (bookworm), VM\n"
            "where     cpu flag hypervisor; pid 1 cgroup /; root fs ext4; "
            "/.dockerenv ignored: nothing else says container");
}

TEST(WhereRunningOutput, JsonCarriesTheSameObjectInHealthAndProbe) {
  v1::WhereRunning where = StaleDockerenvVm();
  v1::HealthSnapshot s;
  *s.mutable_host()->mutable_where() = where;
  s.mutable_host()->set_container(v1::CONTAINER_KIND_NONE);
  v1::HostProbe p;
  *p.mutable_where() = where;
  nlohmann::json health = HealthToJson(s)["host"];
  nlohmann::json probe = ProbeToJson(p);
  EXPECT_EQ(health["where"], probe["where"]);
  EXPECT_EQ(health["where"]["kind"], "vm");
  EXPECT_TRUE(health["where"]["hypervisor"].is_null());
  EXPECT_EQ(health["where"]["evidence"].size(), 4u);
  EXPECT_EQ(health["container"], "none");
  EXPECT_EQ(probe["lxc_guest"], false);
}

TEST(WhereRunningOutput, AnOlderAgentWithoutTheFieldKeepsTheOldWords) {
  EXPECT_TRUE(HealthHostLine(v1::WhereRunning(), v1::CONTAINER_KIND_DOCKER).ends_with("  in docker"));
  v1::HostProbe p;
  p.set_os_pretty_name("Ubuntu");
  p.set_lxc_guest(true);
  EXPECT_EQ(ProbeToText(p).substr(0, ProbeToText(p).find('\n')), "os        Ubuntu, LXC guest");
  EXPECT_EQ(WhereRunningJson(v1::WhereRunning())["kind"], "unknown");
}

TEST(WhereRunningOutput, EvidenceIsInertOnATerminal) {
  v1::WhereRunning where;
  where.set_kind(v1::WHERE_KIND_OTHER_CONTAINER);
  where.add_evidence("/run/systemd/container says \x1b]0;owned\x07x");
  std::string text = WhereEvidenceText(where);
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_EQ(text.find('\x07'), std::string::npos) << text;
}

}  // namespace
}  // namespace gpuctl::client
