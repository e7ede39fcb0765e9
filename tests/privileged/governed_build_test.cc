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
#include <chrono>
#include <ctime>
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

// A stopped build teaches the next one nothing, and the stop reaches every
// compile at once: the governor lets go of the build before the SIGTERM, so
// it does not pause again what the stop resumed. (Before: it did, the
// compiles took their SIGTERM late, their cut-short peaks went into the
// history, and the next build of the same sources was planned from them.)
TEST_F(GovernedBuild, AStoppedBuildIsLetGoAtOnceAndTeachesTheNextOneNothing) {
  const std::string src = dir_.path() + "/src", bin = dir_.path() + "/bin", log = dir_.path() + "/compiles.log";
  fs::create_directories(src);
  fs::create_directories(bin);
  fs::create_symlink(BinaryPath("tests/fake_compile"), bin + "/cc");
  std::ofstream(src + "/Makefile") << "OBJS = o1.o o2.o o3.o o4.o o5.o o6.o\nall: $(OBJS)\n%.o: %.c\n\tcc 700 $(T) $@ $<\n";
  for (int i = 1; i <= 6; ++i) std::ofstream(src + "/o" + std::to_string(i) + ".c") << "int x;\n";
  std::vector<std::string> flags = AgentFlags();
  flags.erase(std::find(flags.begin(), flags.end(), "--guard"), flags.end());
  flags.insert(flags.end(), {"--guard", "on", "--guard-domain", "cgroup:" + domain_});
  StartAgent(flags, AgentEnv());
  const std::vector<std::string> env = {"--env", "PATH=" + bin + ":/usr/bin:/bin", "--env", "FAKE_COMPILE_LOG=" + log};

  std::vector<std::string> first = {"build", "--name", "first", "--cwd", src};
  first.insert(first.end(), env.begin(), env.end());
  first.insert(first.end(), {"--", "make", "-j6", "T=20"});
  ASSERT_EQ(Gpuctl(first).exit_code, 0);
  // Governed: some compiles run, the rest are paused.
  ASSERT_TRUE(WaitUntil([&] { return Status("first")["build"].value("paused", 0) > 0; }, std::chrono::seconds(20)))
      << Status("first").dump(2);
  const auto asked = std::chrono::steady_clock::now();
  RunResult stopped = Gpuctl({"-o", "json", "train", "stop", "first", "--grace", "20s"});
  const auto took = std::chrono::steady_clock::now() - asked;
  ASSERT_EQ(stopped.exit_code, 0) << stopped.err;
  EXPECT_EQ(json::parse(stopped.out)["state"], "stopped");
  // Every compile took the SIGTERM at once (the fake ones die of it): none
  // was left paused until the grace's SIGKILL.
  EXPECT_LT(std::chrono::duration_cast<std::chrono::seconds>(took).count(), 10) << AgentLog();
  json job = Status("first");
  EXPECT_EQ(job["build"]["compiles_done"], 0) << job.dump(2);
  EXPECT_GT(job["build"]["compiles_stopped"].get<int>(), 0) << job.dump(2);
  // Nothing of it was learned.
  EXPECT_EQ(ReadText(StateDir() + "/build-peaks.json").find("o1.c"), std::string::npos)
      << ReadText(StateDir() + "/build-peaks.json");

  // The same sources again, to the end: built, as a fresh copy would be.
  std::vector<std::string> second = {"build", "--name", "second", "--cwd", src, "--wait"};
  second.insert(second.end(), env.begin(), env.end());
  second.insert(second.end(), {"--", "make", "-j6", "T=1"});
  RunResult built = Gpuctl(second);
  EXPECT_EQ(built.exit_code, 0) << built.out << built.err << AgentLog();
  EXPECT_EQ(Status("second")["build"]["compiles_done"], 6);
  // A build that succeeded teaches: its compiles are in the history (saved
  // at most every 10 s).
  EXPECT_TRUE(WaitUntil([&] { return ReadText(StateDir() + "/build-peaks.json").find("o1.c") != std::string::npos; },
                        std::chrono::seconds(15)))
      << ReadText(StateDir() + "/build-peaks.json");
}

// A build that exits 0 while a process it started still runs (a daemon it
// setsid'd) ends with its own exit: --wait returns, the state is succeeded,
// and the process left behind is said and killed.
TEST_F(GovernedBuild, ABuildThatExitsLeavingADaemonEndsWithItsOwnExit) {
  StartAgent(AgentFlags(), AgentEnv());
  const std::string pid_file = dir_.path() + "/daemon.pid";
  RunResult built = Gpuctl({"build", "--name", "leaves", "--cwd", dir_.path(), "--wait", "--", "sh", "-c",
                            "setsid sleep 300 >/dev/null 2>&1 </dev/null & echo $! >" + pid_file + "; echo built"});
  EXPECT_EQ(built.exit_code, 0) << built.out << built.err << AgentLog();
  json job = Status("leaves");
  EXPECT_EQ(job["state"], "succeeded") << job.dump(2);
  EXPECT_EQ(job["exit_code"], 0);
  RunResult events = Gpuctl({"-o", "json", "events"});
  EXPECT_NE(events.out.find("\"build_left_running\""), std::string::npos) << events.out;
  const pid_t daemon = static_cast<pid_t>(std::stol(ReadText(pid_file)));
  EXPECT_TRUE(WaitUntil([&] { return ::kill(daemon, 0) != 0; }, std::chrono::seconds(5)))
      << "the daemon the build left (pid " << daemon << ") still runs";
}

// Builds started in the same second get names of their own: the default
// name is taken by a job already, so the next free one is used, and the
// ended job of that name is never replaced.
TEST_F(GovernedBuild, ADefaultNameAJobHasIsNotTakenAgain) {
  StartAgent(AgentFlags(), AgentEnv());
  // Every name the next 20 seconds could give is taken by a job (a loaded
  // machine may take a few to start them all).
  const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::vector<std::string> taken;
  for (int s = 0; s < 20; ++s) {
    const std::time_t at = now + s;
    std::tm utc{};
    gmtime_r(&at, &utc);
    char name[32];
    std::strftime(name, sizeof name, "build-%Y%m%d-%H%M%S", &utc);
    taken.push_back(name);
    ASSERT_EQ(Gpuctl({"train", "start", "--name", name, "--", "true"}).exit_code, 0);
  }
  RunResult built = Gpuctl({"-o", "json", "build", "--cwd", dir_.path(), "--", "true"});
  ASSERT_EQ(built.exit_code, 0) << built.err;
  const std::string name = json::parse(built.out)["name"];
  EXPECT_TRUE(name.ends_with("-2")) << name;
  EXPECT_NE(std::find(taken.begin(), taken.end(), name.substr(0, name.size() - 2)), taken.end()) << name;
  for (const std::string& old : taken) EXPECT_EQ(Status(old)["kind"], "train") << old << " was replaced";
}

}  // namespace
}  // namespace gpuctl::testing
