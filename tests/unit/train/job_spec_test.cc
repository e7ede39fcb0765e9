#include "agents/train/job_spec.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace gpuctl::train {
namespace {

using Argv = std::vector<std::string>;
using Env = std::map<std::string, std::string>;

JobSpec GoodSpec() {
  JobSpec spec;
  spec.name = "dflash-768";
  spec.command = {"python", "train.py", "--lr", "3e-4"};
  return spec;
}

// The status of GoodSpec() after `change`.
template <typename Change>
Status Validate(Change change) {
  JobSpec spec = GoodSpec();
  change(spec);
  return ValidateJobSpec(spec);
}

bool Mentions(const Status& s, const std::string& text) { return s.message().find(text) != std::string::npos; }

TEST(ValidateJobSpec, AcceptsAGoodSpec) {
  EXPECT_TRUE(ValidateJobSpec(GoodSpec()).ok()) << ValidateJobSpec(GoodSpec()).message();
  Status full = Validate([](JobSpec& s) {
    s.anchors = 1024;
    s.anchors_flag = "-a";
    s.alloc_conf = "expandable_segments:True,max_split_size_mb:128";
    s.env = {{"WANDB_MODE", "offline"}, {"_X1", ""}};
    s.cwd = "/srv/train";
    s.gpus = "0,1,3";
    s.container = "200";
  });
  EXPECT_TRUE(full.ok()) << full.message();
}

TEST(ValidateJobName, AcceptsNameCharactersUpTo64) {
  const std::vector<std::string> names = {"a", "dflash-768", "run_2.v1", "A.B-c_9", std::string(64, 'x'), "..."};
  for (const std::string& name : names) {
    EXPECT_TRUE(ValidateJobName(name).ok()) << name;
  }
}

TEST(ValidateJobName, RefusesOthersWithAHint) {
  for (const std::string& name : std::vector<std::string>{"", ".", "..", "a b", "a/b", "../etc", "a;b", "$(x)", "ü",
                                                          "tab\t", std::string(65, 'x')}) {
    Status s = ValidateJobName(name);
    ASSERT_FALSE(s.ok()) << name;
    EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << name;
    EXPECT_TRUE(Mentions(s, "invalid job name '" + name + "'")) << s.message();
    EXPECT_TRUE(Mentions(s, "A-Z a-z 0-9 . _ -")) << s.message();
  }
  // The spec check applies the same rule first.
  Status s = Validate([](JobSpec& spec) { spec.name = "a/b"; });
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(s, "invalid job name 'a/b'")) << s.message();
}

// A new job's name never starts with '-': every command line (gpuctl's own
// hints among them) would read it as a flag. Old records so named stay
// readable under the general rule.
TEST(ValidateJobName, ANewJobNeverStartsWithADash) {
  for (const char* name : {"-x", "--help", "-"}) {
    EXPECT_TRUE(ValidateJobName(name).ok()) << name;
    Status s = Validate([&](JobSpec& spec) { spec.name = name; });
    EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << name;
    EXPECT_TRUE(Mentions(s, "not starting with '-'")) << s.message();
  }
  EXPECT_TRUE(Validate([](JobSpec& spec) { spec.name = "a-"; }).ok());
}

TEST(ValidateJobSpec, NeedsSomethingToRun) {
  Status s = Validate([](JobSpec& spec) { spec.command.clear(); });
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(s, "nothing to run")) << s.message();
}

TEST(ValidateJobSpec, ScriptAloneOrAsTheCommandsHead) {
  // The client sends a script as {script, args...}; both forms are fine.
  EXPECT_TRUE(Validate([](JobSpec& s) {
                s.script = "/srv/train.sh";
                s.command.clear();
              }).ok());
  EXPECT_TRUE(Validate([](JobSpec& s) {
                s.script = "/srv/train.sh";
                s.command = {"/srv/train.sh"};
              }).ok());
  EXPECT_TRUE(Validate([](JobSpec& s) {
                s.script = "/srv/train.sh";
                s.command = {"/srv/train.sh", "--epochs", "3"};
              }).ok());
}

TEST(ValidateJobSpec, RefusesScriptAndCommandTogether) {
  Status s = Validate([](JobSpec& spec) { spec.script = "/srv/train.sh"; });
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(s, "not both")) << s.message();
  // A one-word command is a command too: the script must not be dropped silently.
  Status one = Validate([](JobSpec& spec) {
    spec.script = "/srv/train.sh";
    spec.command = {"python"};
  });
  EXPECT_EQ(one.code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(one, "not both")) << one.message();
}

TEST(ValidateJobSpec, ScriptMustBeAbsolute) {
  Status s = Validate([](JobSpec& spec) {
    spec.script = "train.sh";
    spec.command.clear();
  });
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(s, "--script must be an absolute path, got 'train.sh'")) << s.message();
}

TEST(ValidateJobSpec, AnchorsMustBePositive) {
  Status s = Validate([](JobSpec& spec) { spec.anchors = 0; });
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(s, "--anchors must be a positive integer")) << s.message();
  EXPECT_TRUE(Validate([](JobSpec& spec) { spec.anchors = 1; }).ok());
}

TEST(ValidateJobSpec, AnchorsFlagMustLookLikeAFlag) {
  for (std::string flag : {"", "-", "max-anchors", "x"}) {
    Status s = Validate([&](JobSpec& spec) {
      spec.anchors = 64;
      spec.anchors_flag = flag;
    });
    EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << flag;
    EXPECT_TRUE(Mentions(s, "--anchors-flag must look like a flag")) << s.message();
  }
  // The flag only matters with --anchors.
  EXPECT_TRUE(Validate([](JobSpec& spec) { spec.anchors_flag = "bogus"; }).ok());
  EXPECT_TRUE(Validate([](JobSpec& spec) {
                spec.anchors = 64;
                spec.anchors_flag = "--budget";
              }).ok());
}

TEST(ValidateJobSpec, BadAllocConfNamesTheOption) {
  Status s = Validate([](JobSpec& spec) { spec.alloc_conf = "expandable_segments:maybe"; });
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(s.message().rfind("--alloc-conf: ", 0), 0u) << s.message();
  EXPECT_TRUE(Mentions(s, "maybe")) << s.message();
  EXPECT_EQ(Validate([](JobSpec& spec) { spec.alloc_conf = "max_split_size_mb:19"; }).code(),
            ErrorCode::kInvalidArgument);
}

TEST(ValidateJobSpec, EnvKeys) {
  for (std::string key : {"", "1ABC", "A-B", "A B", "A=B", "PATH.X", "é"}) {
    Status s = Validate([&](JobSpec& spec) { spec.env = {{key, "v"}}; });
    EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << key;
    EXPECT_TRUE(Mentions(s, "--env " + key + "=...")) << s.message();
  }
  // Values are free: they travel as one argv element.
  EXPECT_TRUE(Validate([](JobSpec& spec) { spec.env = {{"A_1", "x y;$(z) 'q\""}, {"_", ""}}; }).ok());
}

TEST(ValidateJobSpec, CwdMustBeAbsolute) {
  Status s = Validate([](JobSpec& spec) { spec.cwd = "runs/a"; });
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(s, "--cwd must be an absolute path, got 'runs/a'")) << s.message();
  EXPECT_TRUE(Validate([](JobSpec& spec) { spec.cwd = "/"; }).ok());
}

TEST(ValidateJobSpec, GpusAreIndicesOrUuids) {
  for (std::string good : {"0", "0,1,3", "7", "GPU-c6489789-04a5-a2b1-8f0e-23a2b7c7e7f1",
                           "GPU-c6489789-04a5-a2b1-8f0e-23a2b7c7e7f1,GPU-0a1b2c3d-0000-1111-2222-333344445555",
                           "MIG-4b8f5c2e-1d3a-5e6f-9a0b-1c2d3e4f5a6b"}) {
    EXPECT_TRUE(Validate([&](JobSpec& spec) { spec.gpus = good; }).ok()) << good;
  }
  for (std::string bad : {",", "0,", ",0", "0,,1", "0 1", "0, 1", "0;1", "all", "$(id)"}) {
    Status s = Validate([&](JobSpec& spec) { spec.gpus = bad; });
    EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << bad;
    EXPECT_TRUE(Mentions(s, "--gpus must be a comma-separated list")) << s.message();
  }
}

TEST(ValidateJobSpec, ContainerIsANumericVmid) {
  EXPECT_TRUE(Validate([](JobSpec& spec) { spec.container = "200"; }).ok());
  for (std::string bad : {"ct200", "-1", "2 0", "200;", "1.5"}) {
    Status s = Validate([&](JobSpec& spec) { spec.container = bad; });
    EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << bad;
    EXPECT_TRUE(Mentions(s, "--container must be a numeric Proxmox VMID")) << s.message();
  }
}

TEST(EffectiveCommand, IsTheCommandWithoutAnchors) {
  EXPECT_EQ(EffectiveCommand(GoodSpec()), (Argv{"python", "train.py", "--lr", "3e-4"}));
}

TEST(EffectiveCommand, ScriptAloneRunsTheScript) {
  JobSpec spec = GoodSpec();
  spec.command.clear();
  spec.script = "/srv/train.sh";
  EXPECT_EQ(EffectiveCommand(spec), (Argv{"/srv/train.sh"}));
  spec.anchors = 16;
  EXPECT_EQ(EffectiveCommand(spec), (Argv{"/srv/train.sh", "--max-anchors", "16"}));
}

TEST(EffectiveCommand, AnchorsAppendedOrReplaced) {
  JobSpec spec = GoodSpec();
  spec.anchors = 512;
  EXPECT_EQ(EffectiveCommand(spec), (Argv{"python", "train.py", "--lr", "3e-4", "--max-anchors", "512"}));

  spec.command = {"python", "train.py", "--max-anchors", "1024", "--lr", "3e-4"};
  EXPECT_EQ(EffectiveCommand(spec), (Argv{"python", "train.py", "--max-anchors", "512", "--lr", "3e-4"}));

  spec.command = {"python", "train.py", "--max-anchors=1024", "--lr", "3e-4"};
  EXPECT_EQ(EffectiveCommand(spec), (Argv{"python", "train.py", "--max-anchors=512", "--lr", "3e-4"}));
}

TEST(EffectiveCommand, CustomAnchorsFlag) {
  JobSpec spec = GoodSpec();
  spec.anchors = 8;
  spec.anchors_flag = "--budget";
  spec.command = {"python", "train.py", "--budget", "100", "--max-anchors", "3"};
  // Only the chosen flag changes; --max-anchors is now just another option.
  EXPECT_EQ(EffectiveCommand(spec), (Argv{"python", "train.py", "--budget", "8", "--max-anchors", "3"}));
  spec.command = {"python", "train.py"};
  EXPECT_EQ(EffectiveCommand(spec), (Argv{"python", "train.py", "--budget", "8"}));
}

TEST(EffectiveEnv, MinimalSpecGetsJobNameAndUnbufferedPython) {
  EXPECT_EQ(EffectiveEnv(GoodSpec()),
            (Env{{"GPUCTL_ATTEMPT", "1"},
                 {"GPUCTL_JOB", "dflash-768"},
                 {"PYTHONUNBUFFERED", "1"},
                 {"TORCH_NCCL_DUMP_ON_TIMEOUT", "1"},
                 {"TORCH_NCCL_TRACE_BUFFER_SIZE", "2000"}}));
}

TEST(EffectiveEnv, EverySetting) {
  JobSpec spec = GoodSpec();
  spec.env = {{"WANDB_MODE", "offline"}};
  spec.anchors = 256;
  spec.alloc_conf = "expandable_segments:True";
  spec.gpus = "1,2";
  EXPECT_EQ(EffectiveEnv(spec), (Env{{"WANDB_MODE", "offline"},
                                     {"PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"},
                                     {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"},
                                     {"CUDA_VISIBLE_DEVICES", "1,2"},
                                     {"GPUCTL_JOB", "dflash-768"},
                                     {"GPUCTL_ANCHORS", "256"},
                                     {"GPUCTL_ATTEMPT", "1"},
                                     {"PYTHONUNBUFFERED", "1"},
                                     {"TORCH_NCCL_DUMP_ON_TIMEOUT", "1"},
                                     {"TORCH_NCCL_TRACE_BUFFER_SIZE", "2000"}}));
}

TEST(EffectiveEnv, UserPythonUnbufferedWins) {
  JobSpec spec = GoodSpec();
  spec.env = {{"PYTHONUNBUFFERED", "0"}};
  EXPECT_EQ(EffectiveEnv(spec).at("PYTHONUNBUFFERED"), "0");
  spec.env = {{"PYTHONUNBUFFERED", ""}};
  EXPECT_EQ(EffectiveEnv(spec).at("PYTHONUNBUFFERED"), "");
}

TEST(EffectiveEnv, DedicatedOptionsOverrideTheSameNameInEnv) {
  JobSpec spec = GoodSpec();
  spec.env = {{"PYTORCH_CUDA_ALLOC_CONF", "backend:native"},
              {"CUDA_VISIBLE_DEVICES", "7"},
              {"GPUCTL_JOB", "other"},
              {"GPUCTL_ANCHORS", "1"}};
  spec.alloc_conf = "expandable_segments:True";
  spec.gpus = "0";
  spec.anchors = 99;
  Env env = EffectiveEnv(spec);
  EXPECT_EQ(env.at("PYTORCH_CUDA_ALLOC_CONF"), "expandable_segments:True");
  EXPECT_EQ(env.at("CUDA_VISIBLE_DEVICES"), "0");
  EXPECT_EQ(env.at("GPUCTL_JOB"), "dflash-768");
  EXPECT_EQ(env.at("GPUCTL_ANCHORS"), "99");
}

TEST(EffectiveEnv, UnsetOptionsLeaveTheUsersValues) {
  JobSpec spec = GoodSpec();
  spec.env = {{"PYTORCH_CUDA_ALLOC_CONF", "backend:native"}, {"CUDA_VISIBLE_DEVICES", "7"}};
  Env env = EffectiveEnv(spec);
  EXPECT_EQ(env.at("PYTORCH_CUDA_ALLOC_CONF"), "backend:native");
  EXPECT_EQ(env.at("CUDA_VISIBLE_DEVICES"), "7");
  EXPECT_FALSE(env.contains("GPUCTL_ANCHORS"));
}

TEST(TmuxSessionName, PrefixesTheJobName) {
  EXPECT_EQ(TmuxSessionName("dflash-768"), "gpuctl-dflash-768");
  EXPECT_EQ(TmuxSessionName("a.b"), "gpuctl-a.b");
}

}  // namespace
}  // namespace gpuctl::train

namespace gpuctl::train {
namespace {

TEST(EffectiveCommand, AResumedRunGetsTheResumeArgWordsWithItsCheckpoint) {
  JobSpec spec;
  spec.name = "r";
  spec.command = {"python", "train.py"};
  spec.checkpoint.dir = "/ckpt";
  spec.checkpoint.resume_arg = "--resume {checkpoint}  --tag={checkpoint}/x";
  EXPECT_EQ(EffectiveCommand(spec), (std::vector<std::string>{"python", "train.py"}));  // no checkpoint yet
  spec.resume_from = "/ckpt/my run/checkpoint-7";
  EXPECT_EQ(EffectiveCommand(spec), (std::vector<std::string>{"python", "train.py", "--resume",
                                                              "/ckpt/my run/checkpoint-7",
                                                              "--tag=/ckpt/my run/checkpoint-7/x"}));
  EXPECT_EQ(EffectiveEnv(spec).at("GPUCTL_RESUME_FROM"), "/ckpt/my run/checkpoint-7");
}

TEST(EffectiveEnv, TurnsNcclsFlightRecorderOnUnlessTheUserChose) {
  JobSpec spec;
  spec.name = "r";
  spec.command = {"python"};
  EXPECT_EQ(EffectiveEnv(spec).at("TORCH_NCCL_DUMP_ON_TIMEOUT"), "1");
  EXPECT_EQ(EffectiveEnv(spec).at("TORCH_NCCL_TRACE_BUFFER_SIZE"), "2000");
  spec.env["TORCH_NCCL_TRACE_BUFFER_SIZE"] = "0";
  EXPECT_EQ(EffectiveEnv(spec).at("TORCH_NCCL_TRACE_BUFFER_SIZE"), "0");
}

TEST(ValidateJobSpec, RefusesBadHangAndCheckpointSettings) {
  JobSpec spec;
  spec.name = "r";
  spec.command = {"python"};
  auto refused = [&](const std::string& needle) {
    Status s = ValidateJobSpec(spec);
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.message().find(needle), std::string::npos) << s.message();
    spec = JobSpec{};
    spec.name = "r";
    spec.command = {"python"};
  };
  spec.hang.after_ms = 10;
  refused("--hang-after");
  spec.hang.start_timeout_ms = 0;
  refused("--start-timeout");
  spec.checkpoint.dir = "ckpt";
  refused("--checkpoint-dir must be an absolute path");
  spec.checkpoint.dir = "/ckpt";
  spec.checkpoint.resume_arg = "--resume";
  refused("{checkpoint}");
  spec.checkpoint.resume_arg = "--resume {checkpoint}";
  refused("--resume-arg needs --checkpoint-dir");
  spec.checkpoint.complete_marker = "a/b";
  refused("--checkpoint-complete");
  spec.checkpoint.max_restarts_without_progress = 1000;
  refused("--max-restarts-without-progress");
  // A start may ask to resume from a checkpoint, under its directory only.
  spec.checkpoint.dir = "/ckpt";
  spec.resume_from = "/ckpt/checkpoint-10";
  EXPECT_TRUE(ValidateJobSpec(spec).ok());
  spec.resume_from = "/ckptx/checkpoint-10";
  spec.checkpoint.dir = "/ckpt";
  refused("under --checkpoint-dir");
  spec.checkpoint.dir = "/ckpt";
  spec.resume_from = "/ckpt/../etc/shadow";
  refused("under --checkpoint-dir");
  spec.resume_from = "/ckpt/checkpoint-10";  // no --checkpoint-dir
  refused("under --checkpoint-dir");
}

}  // namespace
}  // namespace gpuctl::train
