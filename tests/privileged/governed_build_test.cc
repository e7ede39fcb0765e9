// The guard and the build governor meet: gpuctld's guard watches a 2.5 GiB
// memory cgroup (cgroup v1, for real), and `gpuctl build -- make -j8` runs
// eight compiles that each peak at 700 MiB. The build's budget is the
// domain's (what it has left, less the guard's reserve), so the governor
// pauses compiles before the guard's line: every object is built, with no
// guard kill and no kernel OOM kill, and more than one compile at a time.
// Needs root and a writable v1 memory hierarchy; skips with the reason
// elsewhere.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include <gtest/gtest.h>

#include "tests/integration/train_fixture.h"
#include "tests/privileged/memory_cgroup_support.h"
#include "tests/fakes/skip_policy.h"
#include "common/units.h"

namespace gpuctl::testing {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// The most compiles at their peak at once, from their "peak T" / "end T"
// lines (a paused compile has started, but holds less until it runs again).
int MostAtOnce(const std::string& log) {
  std::vector<std::pair<double, int>> edges;
  std::istringstream in(ReadText(log));
  std::string what;
  double at = 0;
  while (in >> what >> at) {
    if (what != "start") edges.emplace_back(at, what == "peak" ? 1 : -1);
  }
  std::sort(edges.begin(), edges.end());
  int now = 0, most = 0;
  for (const auto& [t, d] : edges) most = std::max(most, now += d);
  return most;
}

// From the first compile's start to the last one's end. Each compile grows
// for 2 s of its own running time (a paused one makes no progress), so eight
// one at a time take 16 s at least: less is proof that they overlapped.
double Makespan(const std::string& log) {
  std::istringstream in(ReadText(log));
  std::string what;
  double at = 0, first = 0, last = 0;
  while (in >> what >> at) {
    if (what == "start" && (first == 0 || at < first)) first = at;
    if (what == "end") last = std::max(last, at);
  }
  return last - first;
}

class GovernedBuild : public TrainFixture {
 protected:
  void SetUp() override {
    TrainFixture::SetUp();
    if (geteuid() != 0) GPUCTL_SKIP() << "needs root to create memory cgroups";
    if (!fs::exists(kMemoryRoot + "/memory.limit_in_bytes")) {
      GPUCTL_SKIP_ALLOWED(kPlatform) << "no cgroup v1 memory hierarchy at " << kMemoryRoot << " (a v2 host)";
    }
    if (Counter("/proc/meminfo", "SwapTotal:") > 0) GPUCTL_SKIP_ALLOWED(kPlatform) << "swap is on: the domain would swap, not fill";
    domain_ = OwnMemoryCgroup() + "/gpuctl-build-guard-" + std::to_string(getpid());
    domain_dir_ = kMemoryRoot + domain_;
    ASSERT_EQ(mkdir(domain_dir_.c_str(), 0755), 0) << domain_dir_;
    std::ofstream(domain_dir_ + "/memory.limit_in_bytes") << 2560 * kMiB;
  }
  void TearDown() override {
    if (agent_) {
      agent_->Signal(SIGTERM);
      agent_->WaitForExit(std::chrono::seconds(5));
    }
    TrainFixture::TearDown();
    if (!domain_dir_.empty()) KillAndRemove(domain_dir_);
  }
  std::string domain_, domain_dir_;
};

TEST_F(GovernedBuild, EightCompilesInA25GiBDomainAllBuildWithoutAKill) {
  // Eight sources, a make that compiles them all at once, and `cc` the fake
  // compile (700 MiB over 2 s each).
  const std::string src = dir_.path() + "/src", bin = dir_.path() + "/bin", log = dir_.path() + "/compiles.log";
  fs::create_directories(src);
  fs::create_directories(bin);
  fs::create_symlink(BinaryPath("tests/fake_compile"), bin + "/cc");
  std::ofstream makefile(src + "/Makefile");
  makefile << "OBJS = o1.o o2.o o3.o o4.o o5.o o6.o o7.o o8.o\nall: $(OBJS)\n%.o: %.c\n\tcc 700 2 $@ $<\n";
  makefile.close();
  for (int i = 1; i <= 8; ++i) std::ofstream(src + "/o" + std::to_string(i) + ".c") << "int x;\n";

  std::vector<std::string> flags = AgentFlags();
  // The guard's domain is the 2.5 GiB cgroup (jobs go below it).
  flags.erase(std::find(flags.begin(), flags.end(), "--guard"), flags.end());
  flags.insert(flags.end(), {"--guard", "on", "--guard-domain", "cgroup:" + domain_});
  StartAgent(flags, AgentEnv());

  RunResult built = Gpuctl({"build", "--name", "b", "--cwd", src, "--env", "PATH=" + bin + ":/usr/bin:/bin", "--env",
                            "FAKE_COMPILE_LOG=" + log, "--wait", "--", "make", "-j8"});
  json job = Status("b");
  EXPECT_EQ(built.exit_code, 0) << built.out << built.err << job.dump(2) << AgentLog();
  EXPECT_EQ(job.value("state", ""), "succeeded") << job.dump(2);
  for (int i = 1; i <= 8; ++i) EXPECT_TRUE(fs::exists(src + "/o" + std::to_string(i) + ".o")) << i;
  // Its budget is the domain's, not the host's memory.
  ASSERT_TRUE(job["build"].is_object()) << job.dump(2);
  EXPECT_LE(job["build"]["budget_bytes"].get<uint64_t>(), 2560 * kMiB) << job.dump(2);
  EXPECT_EQ(job["build"]["oom_kills"], 0) << job.dump(2);
  EXPECT_EQ(Counter(domain_dir_ + "/memory.oom_control", "oom_kill"), 0u) << "the kernel's OOM killer fired";
  RunResult events = Gpuctl({"-o", "json", "events"});
  EXPECT_EQ(events.out.find("\"guard_kill\""), std::string::npos) << events.out;
  // Governed, not serialised: faster than one compile at a time could be;
  // and never more at their peak at once than the domain holds.
  EXPECT_LT(Makespan(log), 8 * 2.0) << ReadText(log);
  EXPECT_LE(static_cast<uint64_t>(MostAtOnce(log)) * 700 * kMiB, 2560 * kMiB) << ReadText(log);
  std::cout << "makespan " << Makespan(log) << " s (one at a time: 16 s at least); at their peak at once, at most "
            << MostAtOnce(log) << "; pauses " << job["build"]["pauses"] << "\n";
}

}  // namespace
}  // namespace gpuctl::testing
