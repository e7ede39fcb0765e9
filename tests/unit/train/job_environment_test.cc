// The job's environment is decided, not inherited: the agent's less its own
// variables, PATH, the job's --env, then what gpuctl sets; and a host job's
// command is looked up on that PATH before anything starts.
#include "agents/train/job_environment.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "tests/fakes/temp_dir.h"

namespace gpuctl::train {
namespace {

JobSpec HostSpec() {
  JobSpec spec;
  spec.name = "j";
  spec.command = {"sh", "-c", "true"};
  spec.cwd = "/";
  return spec;
}

TEST(JobEnvironment, TheAgentsOwnVariablesStayWithTheAgent) {
  EnvMap agent = {{"GPUCTLD_CONFIG", "/etc/gpuctl.json"}, {"NOTIFY_SOCKET", "/run/systemd/notify"},
                  {"WATCHDOG_USEC", "1000"},          {"LISTEN_FDS", "1"},
                  {"TMUX", "/tmp/tmux-0/default,1,0"}, {"CUDA_HOME", "/usr/local/cuda"},
                  {"PATH", "/opt/bin:/usr/bin:/bin"},  {"-odd", "x"},
                  {"GPUCTL_NODE", "client's, not the agent's"}};
  JobEnvironment env = BuildJobEnvironment(agent, HostSpec(), {{"GPUCTL_RUN_ID", "r1"}});
  EXPECT_TRUE(env.whole);
  for (const char* gone : {"GPUCTLD_CONFIG", "NOTIFY_SOCKET", "WATCHDOG_USEC", "LISTEN_FDS", "TMUX", "-odd"}) {
    EXPECT_FALSE(env.vars.contains(gone)) << gone;
  }
  EXPECT_EQ(env.vars.at("CUDA_HOME"), "/usr/local/cuda");
  EXPECT_EQ(env.vars.at("PATH"), "/opt/bin:/usr/bin:/bin");
  EXPECT_EQ(env.vars.at("GPUCTL_NODE"), "client's, not the agent's");
  EXPECT_EQ(env.vars.at("GPUCTL_RUN_ID"), "r1");
  // What gpuctl set, and only that: not the agent's CUDA_HOME or PATH.
  EXPECT_FALSE(env.set_by_gpuctl.contains("CUDA_HOME"));
  EXPECT_FALSE(env.set_by_gpuctl.contains("PATH"));
  EXPECT_EQ(env.set_by_gpuctl.at("GPUCTL_RUN_ID"), "r1");
  EXPECT_EQ(env.set_by_gpuctl.at("GPUCTL_JOB"), "j");
  EXPECT_EQ(env.set_by_gpuctl.at("PYTHONUNBUFFERED"), "1");
}

TEST(JobEnvironment, NoPathOrAnEmptyOneGetsTheDefault) {
  for (const EnvMap& agent : {EnvMap{}, EnvMap{{"PATH", ""}}}) {
    JobEnvironment env = BuildJobEnvironment(agent, HostSpec(), {});
    EXPECT_EQ(env.vars.at("PATH"), kDefaultJobPath);
    EXPECT_EQ(env.set_by_gpuctl.at("PATH"), kDefaultJobPath) << "gpuctl chose it: shown in run_env";
  }
}

TEST(JobEnvironment, TheJobsEnvWinsOverTheAgentsAndIsNotListedAsGpuctls) {
  JobSpec spec = HostSpec();
  spec.env = {{"CUDA_HOME", "/opt/cuda-12"}, {"PATH", "/venv/bin:/usr/bin:/bin"}, {"PYTHONUNBUFFERED", "0"}};
  spec.alloc_conf = "expandable_segments:True";
  JobEnvironment env = BuildJobEnvironment({{"CUDA_HOME", "/usr/local/cuda"}, {"PATH", ""}}, spec, {});
  EXPECT_EQ(env.vars.at("CUDA_HOME"), "/opt/cuda-12");
  EXPECT_EQ(env.vars.at("PATH"), "/venv/bin:/usr/bin:/bin");
  EXPECT_EQ(env.vars.at("PYTHONUNBUFFERED"), "0");
  EXPECT_FALSE(env.set_by_gpuctl.contains("CUDA_HOME"));
  EXPECT_FALSE(env.set_by_gpuctl.contains("PATH"));
  EXPECT_FALSE(env.set_by_gpuctl.contains("PYTHONUNBUFFERED"));
  EXPECT_EQ(env.set_by_gpuctl.at("PYTORCH_CUDA_ALLOC_CONF"), "expandable_segments:True");
}

TEST(JobEnvironment, AnotherRunsVariablesAreNotInherited) {
  // An agent started from a gpuctl job's shell (or a shell that exported
  // them) holds that run's GPUCTL_RESUME_FROM, GPUCTL_ANCHORS...: a job
  // without --resume-from must not resume from another run's checkpoint.
  EnvMap agent = {{"GPUCTL_RESUME_FROM", "/ckpt/other-run/step_900"},
                  {"GPUCTL_ANCHORS", "512"},
                  {"GPUCTL_JOB", "outer"},
                  {"GPUCTL_ATTEMPT", "3"},
                  {"GPUCTL_MULTINODE_RANK", "1"},
                  {"GPUCTL_BUILD_BUDGET", "1"},
                  {"GPUCTL_NODE", "gpu2"},
                  {"PATH", "/usr/bin:/bin"}};
  JobEnvironment env = BuildJobEnvironment(agent, HostSpec(), {{"GPUCTL_RUN_ID", "r1"}});
  for (const char* gone : {"GPUCTL_RESUME_FROM", "GPUCTL_ANCHORS", "GPUCTL_MULTINODE_RANK", "GPUCTL_BUILD_BUDGET"}) {
    EXPECT_FALSE(env.vars.contains(gone)) << gone;
  }
  EXPECT_EQ(env.vars.at("GPUCTL_JOB"), "j");
  EXPECT_EQ(env.vars.at("GPUCTL_ATTEMPT"), "1");
  EXPECT_EQ(env.vars.at("GPUCTL_NODE"), "gpu2") << "the client's settings are the user's";
  JobSpec resuming = HostSpec();
  resuming.resume_from = "/ckpt/mine";
  resuming.anchors = 768;
  JobEnvironment own = BuildJobEnvironment(agent, resuming, {});
  EXPECT_EQ(own.vars.at("GPUCTL_RESUME_FROM"), "/ckpt/mine");
  EXPECT_EQ(own.vars.at("GPUCTL_ANCHORS"), "768");
}

TEST(JobEnvironment, AContainerJobGetsNothingOfTheHosts) {
  JobSpec spec = HostSpec();
  spec.container = "200";
  JobEnvironment env = BuildJobEnvironment({{"CUDA_HOME", "/usr/local/cuda"}, {"PATH", "/host/bin"}}, spec,
                                           {{"GPUCTL_RUN_ID", "r2"}});
  EXPECT_FALSE(env.whole) << "on top of pct exec's own environment";
  EXPECT_FALSE(env.vars.contains("CUDA_HOME"));
  EXPECT_FALSE(env.vars.contains("PATH"));
  EXPECT_EQ(env.vars.at("GPUCTL_RUN_ID"), "r2");
}

TEST(JobEnvironment, AgentOnlyNamesAreDecidedByName) {
  EXPECT_TRUE(IsAgentOnlyVariable("GPUCTLD_ANYTHING"));
  EXPECT_TRUE(IsAgentOnlyVariable("NOTIFY_SOCKET"));
  EXPECT_TRUE(IsAgentOnlyVariable("TMUX_PANE"));
  EXPECT_FALSE(IsAgentOnlyVariable("GPUCTL_RUN_ID"));
  EXPECT_FALSE(IsAgentOnlyVariable("HOME"));
  EXPECT_FALSE(IsAgentOnlyVariable("CUDA_VISIBLE_DEVICES"));
}

class CommandResolvesTest : public ::testing::Test {
 protected:
  std::string Bin() const { return dir_.path() + "/bin"; }
  void MakeFile(const std::string& path, mode_t mode) {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path) << "#!/bin/sh\n";
    ::chmod(path.c_str(), mode);
  }
  JobEnvironment Env(const std::string& path) { return JobEnvironment{.vars = {{"PATH", path}}, .whole = true, .set_by_gpuctl = {}}; }
  JobSpec Spec(std::vector<std::string> command) {
    JobSpec spec = HostSpec();
    spec.command = std::move(command);
    spec.cwd = dir_.path();
    return spec;
  }
  testing::TempDir dir_;
};

TEST_F(CommandResolvesTest, ACommandOnTheJobsPathPasses) {
  MakeFile(Bin() + "/trainer", 0755);
  EXPECT_TRUE(CheckCommandResolves(Spec({"trainer", "--lr", "1"}), Env("/nonexistent:" + Bin())).ok());
}

TEST_F(CommandResolvesTest, AMissingCommandIsRefusedNamingThePathSearched) {
  Status s = CheckCommandResolves(Spec({"no-such-trainer"}), Env("/usr/bin:/bin"));
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("'no-such-trainer'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("(/usr/bin:/bin)"), std::string::npos) << s.message();
}

TEST_F(CommandResolvesTest, ARelativePathIsTheJobsCwdsNotTheAgents) {
  MakeFile(dir_.path() + "/train.sh", 0755);
  EXPECT_TRUE(CheckCommandResolves(Spec({"./train.sh"}), Env("/usr/bin")).ok());
  Status missing = CheckCommandResolves(Spec({"./other.sh"}), Env("/usr/bin"));
  EXPECT_EQ(missing.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(missing.message().find("no such file"), std::string::npos) << missing.message();
}

TEST_F(CommandResolvesTest, ARelativePathEntryIsSearchedFromTheJobsCwd) {
  MakeFile(dir_.path() + "/tools/runner", 0755);
  EXPECT_TRUE(CheckCommandResolves(Spec({"runner"}), Env("/usr/bin:tools")).ok());
}

TEST_F(CommandResolvesTest, AFileThatIsNotExecutableIsRefused) {
  MakeFile(dir_.path() + "/train.sh", 0644);
  Status s = CheckCommandResolves(Spec({dir_.path() + "/train.sh"}), Env("/usr/bin"));
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("not an executable file"), std::string::npos) << s.message();
  MakeFile(Bin() + "/plain", 0644);
  EXPECT_EQ(CheckCommandResolves(Spec({"plain"}), Env(Bin())).code(), ErrorCode::kInvalidArgument)
      << "execvp skips it, as the job would";
}

TEST_F(CommandResolvesTest, ADirectoryOrABrokenLinkIsNotToldToChmod) {
  std::filesystem::create_directory(dir_.path() + "/train");
  Status dir = CheckCommandResolves(Spec({"./train"}), Env("/usr/bin"));
  EXPECT_EQ(dir.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(dir.message().find("is a directory"), std::string::npos) << dir.message();
  EXPECT_EQ(dir.message().find("chmod"), std::string::npos) << dir.message();
  std::filesystem::create_symlink(dir_.path() + "/nowhere", dir_.path() + "/dangling");
  std::filesystem::create_symlink(dir_.path() + "/loop", dir_.path() + "/loop");
  for (const char* link : {"./dangling", "./loop"}) {
    Status s = CheckCommandResolves(Spec({link}), Env("/usr/bin"));
    EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << link;
    EXPECT_NE(s.message().find("a link that leads nowhere"), std::string::npos) << s.message();
    EXPECT_EQ(s.message().find("chmod"), std::string::npos) << s.message();
  }
}

TEST_F(CommandResolvesTest, ContainerAndScriptJobsAreNotLookedUpHere) {
  JobSpec in_container = Spec({"no-such-trainer"});
  in_container.container = "200";
  EXPECT_TRUE(CheckCommandResolves(in_container, Env("/usr/bin")).ok());
  JobSpec script = Spec({"/srv/missing.sh"});
  script.script = "/srv/missing.sh";
  EXPECT_TRUE(CheckCommandResolves(script, Env("/usr/bin")).ok()) << "the script's own check says it";
}

}  // namespace
}  // namespace gpuctl::train
