// `gpuctl train` flag handling through RunCli, with no agent listening: what
// is wrong in the flags must give exit 2 before any connection is tried;
// what is right gets as far as the connection (exit 3).
#include <gtest/gtest.h>

#include <sstream>

#include "client/cli.h"
#include "client/exit_codes.h"
#include "tests/unit/client/cli_run.h"
#include "client/train_start_request.h"

namespace gpuctl::client {
namespace {


std::vector<std::string> Start(std::vector<std::string> flags) {
  std::vector<std::string> args = {"train", "start"};
  args.insert(args.end(), flags.begin(), flags.end());
  return args;
}

TEST(TrainStartCli, BadNamesAreUsageErrors) {
  for (const std::string& name : std::vector<std::string>{"bad name", "a/b", "x;rm -rf", "..", ".", "", std::string(65, 'a')}) {
    CliRun r = RunGpuctl(Start({"--name", name, "--", "python3", "train.py"}));
    EXPECT_EQ(r.code, kExitUsage) << name << ": " << r.err;
    EXPECT_NE(r.err.find("invalid job name"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("cannot reach"), std::string::npos) << r.err;
  }
}

// "--name=-x" reaches the name check (as a separate word the parser takes
// it for a flag): refused before any connection, with the rule.
TEST(TrainStartCli, NamesStartingWithADashAreUsageErrors) {
  CliRun r = RunGpuctl(Start({"--name=-x", "--", "python3", "train.py"}));
  EXPECT_EQ(r.code, kExitUsage) << r.err;
  EXPECT_NE(r.err.find("not starting with '-'"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("cannot reach"), std::string::npos) << r.err;
}

TEST(TrainStartCli, AnchorsMustBeAPositiveInteger) {
  for (const std::string& anchors : std::vector<std::string>{"abc", "0", "-5", "1.5", "+3", "1e3", "", "99999999999999999999"}) {
    CliRun r = RunGpuctl(Start({"--name", "job", "--anchors=" + anchors, "--", "python3", "train.py"}));
    EXPECT_EQ(r.code, kExitUsage) << anchors << ": " << r.err;
    EXPECT_NE(r.err.find("--anchors must be a positive integer"), std::string::npos) << anchors << ": " << r.err;
  }
  // Given as a separate word, "-5" may be taken for a flag by the parser: still exit 2.
  EXPECT_EQ(RunGpuctl(Start({"--name", "job", "--anchors", "-5", "--", "python3"})).code, kExitUsage);
}

TEST(TrainStartCli, EnvNeedsAnEqualsSign) {
  CliRun r = RunGpuctl(Start({"--name", "job", "--env", "WANDB_MODE", "--", "python3"}));
  EXPECT_EQ(r.code, kExitUsage) << r.err;
  EXPECT_NE(r.err.find("--env 'WANDB_MODE' has no '='"), std::string::npos) << r.err;
  EXPECT_EQ(RunGpuctl(Start({"--name", "job", "--env", "1X=2", "--", "python3"})).code, kExitUsage);
  EXPECT_EQ(RunGpuctl(Start({"--name", "job", "--env", "=2", "--", "python3"})).code, kExitUsage);
}

TEST(TrainStartCli, ScriptXorCommand) {
  CliRun both = RunGpuctl(Start({"--name", "job", "--script", "run.sh", "--", "python3"}));
  EXPECT_EQ(both.code, kExitUsage);
  EXPECT_NE(both.err.find("not both"), std::string::npos) << both.err;
  CliRun neither = RunGpuctl(Start({"--name", "job"}));
  EXPECT_EQ(neither.code, kExitUsage);
  EXPECT_NE(neither.err.find("nothing to run"), std::string::npos) << neither.err;
}

TEST(TrainStartCli, TheCommandGoesAfterTheSeparator) {
  CliRun r = RunGpuctl(Start({"--name", "job", "python3", "train.py"}));
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("unexpected 'python3 train.py' before '--'"), std::string::npos) << r.err;
  // A stray word before "--" (e.g. a second --env value) is refused too
  // (by the parser, with its own words).
  CliRun stray = RunGpuctl(Start({"--name", "job", "--env", "A=1", "B=2", "--", "python3"}));
  EXPECT_EQ(stray.code, kExitUsage) << stray.err;
}

TEST(TrainStartCli, MissingNameIsAUsageError) {
  EXPECT_EQ(RunGpuctl(Start({"--", "python3"})).code, kExitUsage);
}

TEST(TrainStartCli, AValidStartReachesForTheAgent) {
  CliRun r = RunGpuctl(Start({"--name", "dflash-768", "--anchors", "768", "--env", "A=1", "--alloc-conf",
                        "expandable_segments:True", "--", "python3", "train.py", "--max-anchors", "1024"}));
  EXPECT_EQ(r.code, kExitUnreachable) << r.err;
  EXPECT_NE(r.err.find("cannot reach gpuctld at unix:/nonexistent/gpuctl-test/x.sock"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(RunGpuctl(Start({"--name", "s", "--script", "./run.sh"})).code, kExitUnreachable);
}

TEST(TrainOtherCli, ValidatedBeforeConnecting) {
  EXPECT_EQ(RunGpuctl({"train", "status", "no/such"}).code, kExitUsage);
  EXPECT_EQ(RunGpuctl({"train", "stop", "no such"}).code, kExitUsage);
  EXPECT_EQ(RunGpuctl({"train", "stop", "job", "--grace", "soon"}).code, kExitUsage);
  EXPECT_EQ(RunGpuctl({"train", "stop", "job", "--grace", "25h"}).code, kExitUsage);
  EXPECT_EQ(RunGpuctl({"train", "logs", "a b"}).code, kExitUsage);
  EXPECT_EQ(RunGpuctl({"train", "logs", "job", "--tail", "5", "--from-offset", "10"}).code, kExitUsage);
  EXPECT_EQ(RunGpuctl({"train", "logs", "job", "--tail", "many"}).code, kExitUsage);
  EXPECT_EQ(RunGpuctl({"train"}).code, kExitUsage);
}

TEST(TrainOtherCli, UnreachableAgentIsExit3) {
  EXPECT_EQ(RunGpuctl({"train", "status", "job"}).code, kExitUnreachable);
  EXPECT_EQ(RunGpuctl({"train", "status"}).code, kExitUnreachable);
  EXPECT_EQ(RunGpuctl({"train", "list"}).code, kExitUnreachable);
  EXPECT_EQ(RunGpuctl({"train", "stop", "job", "--grace", "0"}).code, kExitUnreachable);
  EXPECT_EQ(RunGpuctl({"train", "logs", "job"}).code, kExitUnreachable);
  // -f probes first: an address with nobody there fails at once, no retrying.
  CliRun follow = RunGpuctl({"train", "logs", "-f", "job"});
  EXPECT_EQ(follow.code, kExitUnreachable);
  EXPECT_EQ(follow.err.find("reconnecting"), std::string::npos) << follow.err;
}

TEST(TrainHelp, ExplainsTheFlags) {
  CliRun r = RunGpuctl({"train", "start", "--help"});
  EXPECT_EQ(r.code, kExitOk);
  EXPECT_NE(r.out.find("PYTORCH_CUDA_ALLOC_CONF for the job, checked before launch, e.g. expandable_segments:True"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ppends --max-anchors N to the command (replacing one already there) and sets GPUCTL_ANCHORS"),
            std::string::npos) << r.out;
}

TrainStartFlags Flags(std::vector<std::string> command) {
  TrainStartFlags flags;
  flags.name = "job";
  flags.command = std::move(command);
  return flags;
}

TEST(BuildStartJobRequest, CommandIsPassedVerbatim) {
  std::vector<std::string> argv = {"python3", "train.py", "--max-anchors", "1024", "--", "-x", "a b", "$HOME;ls"};
  Result<v1::StartJobRequest> r = BuildStartJobRequest(Flags(argv), "/home/me/proj");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const v1::JobSpec& spec = r->spec();
  EXPECT_EQ(std::vector<std::string>(spec.command().begin(), spec.command().end()), argv);
  EXPECT_EQ(spec.name(), "job");
  EXPECT_EQ(spec.script(), "");
  EXPECT_FALSE(spec.has_anchors());
  EXPECT_EQ(spec.cwd(), "/home/me/proj");  // the client's directory by default
}

TEST(BuildStartJobRequest, ScriptAndCwdBecomeAbsolute) {
  TrainStartFlags flags = Flags({});
  flags.script = "./scripts/../run.sh";
  flags.cwd = "data/";
  Result<v1::StartJobRequest> r = BuildStartJobRequest(flags, "/home/me/proj");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->spec().script(), "/home/me/proj/run.sh");
  ASSERT_EQ(r->spec().command_size(), 1);
  EXPECT_EQ(r->spec().command(0), "/home/me/proj/run.sh");
  EXPECT_EQ(r->spec().cwd(), "/home/me/proj/data");
  flags.script = "/opt/run.sh";
  flags.cwd = "/scratch";
  r = BuildStartJobRequest(flags, "/home/me/proj");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->spec().script(), "/opt/run.sh");
  EXPECT_EQ(r->spec().cwd(), "/scratch");
}

// An agent on another host (--node, TCP) or a container: this directory
// means nothing there, so none is sent and relative paths are refused.
TEST(BuildStartJobRequest, ARemoteJobGetsNoClientDirectory) {
  TrainStartFlags flags = Flags({"python3", "train.py"});
  Result<v1::StartJobRequest> r = BuildStartJobRequest(flags, "");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->spec().cwd(), "");
  flags.cwd = "/srv/run";
  EXPECT_EQ(BuildStartJobRequest(flags, "")->spec().cwd(), "/srv/run");
  flags.cwd = "data";
  Result<v1::StartJobRequest> relative = BuildStartJobRequest(flags, "");
  EXPECT_EQ(relative.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(relative.status().message().find("--cwd data"), std::string::npos);
  TrainStartFlags script = Flags({});
  script.script = "run.sh";
  EXPECT_NE(BuildStartJobRequest(script, "").status().message().find("--script run.sh"), std::string::npos);
}

TEST(BuildStartJobRequest, EveryFlagReachesTheSpec) {
  TrainStartFlags flags = Flags({"python3", "train.py"});
  flags.anchors = "768";
  flags.anchors_flag = "--anchors";
  flags.alloc_conf = "expandable_segments:True";
  flags.env = {"A=1", "B=x=y", "C=", "A=2"};
  flags.gpus = "0,1";
  flags.container = "200";
  Result<v1::StartJobRequest> r = BuildStartJobRequest(flags, "/w");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const v1::JobSpec& spec = r->spec();
  ASSERT_TRUE(spec.has_anchors());
  EXPECT_EQ(spec.anchors(), 768u);
  EXPECT_EQ(spec.anchors_flag(), "--anchors");
  EXPECT_EQ(spec.alloc_conf(), "expandable_segments:True");
  EXPECT_EQ(spec.env().size(), 3u);
  EXPECT_EQ(spec.env().at("A"), "2");  // the last one wins
  EXPECT_EQ(spec.env().at("B"), "x=y");
  EXPECT_EQ(spec.env().at("C"), "");
  EXPECT_EQ(spec.gpus(), "0,1");
  EXPECT_EQ(spec.container(), "200");
}

// --on-oom goes both ways: typed for this agent, the string for an older one.
TEST(BuildStartJobRequest, OnOomTypedAndAsTheString) {
  TrainStartFlags flags;
  flags.name = "j";
  flags.command = {"python3", "train.py"};
  flags.on_oom = "recover";
  flags.oom_retries = "2";
  Result<v1::StartJobRequest> request = BuildStartJobRequest(flags, "/srv");
  ASSERT_TRUE(request.ok()) << request.status().message();
  EXPECT_EQ(request->spec().on_oom(), "recover");
  EXPECT_EQ(request->spec().on_oom_policy(), v1::ON_OOM_RECOVER);
  EXPECT_EQ(request->spec().oom_retries(), 2u);
  flags.on_oom = "";
  flags.oom_retries = "";
  request = BuildStartJobRequest(flags, "/srv");
  ASSERT_TRUE(request.ok()) << request.status().message();
  EXPECT_EQ(request->spec().on_oom(), "");
  EXPECT_EQ(request->spec().on_oom_policy(), v1::ON_OOM_FAIL);
  flags.on_oom = "retry";
  EXPECT_EQ(BuildStartJobRequest(flags, "/srv").status().message(), "--on-oom must be fail or recover, got 'retry'");
  flags.on_oom = "fail";
  flags.oom_retries = "2";
  EXPECT_EQ(BuildStartJobRequest(flags, "/srv").status().message(),
            "--oom-retries, --oom-knob and --retry-arg act only with --on-oom recover");
}

TEST(ParseAnchors, OnlyPositiveIntegers) {
  EXPECT_EQ(ParseAnchors("1").value_or(0), 1u);
  EXPECT_EQ(ParseAnchors("1024").value_or(0), 1024u);
  EXPECT_EQ(ParseAnchors("9999999999999999999").value_or(0), 9999999999999999999ull);
  for (const char* bad : {"", "0", "00", "-5", "1.5", "abc", " 1", "1 ", "0x10", "99999999999999999999"}) {
    EXPECT_FALSE(ParseAnchors(bad).ok()) << bad;
  }
}

TEST(ArgsAfterSeparator, FindsTheFirstSeparator) {
  EXPECT_FALSE(ArgsAfterSeparator({"train", "start"}).has_value());
  EXPECT_EQ(ArgsAfterSeparator({"a", "--", "b", "--", "c"}), (std::vector<std::string>{"b", "--", "c"}));
  EXPECT_EQ(ArgsAfterSeparator({"a", "--"}), std::vector<std::string>{});
}

}  // namespace
}  // namespace gpuctl::client
