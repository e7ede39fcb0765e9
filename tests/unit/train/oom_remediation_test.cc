// The OOM remediation rule on the real captures (../shared/fixtures/gpu-host)
// and on literals in PyTorch's wording: the incident's 1024 -> 768 with
// expandable segments, fragmentation fixed by the conf alone, giving up.
#include "agents/train/oom_remediation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "agents/train/cuda_oom_message.h"

namespace gpuctl::train {
namespace {

using ::testing::ElementsAre;

// The OOM line of a real capture, parsed as the agent parses it.
LogEvent OomFromCapture(const std::string& file) {
  std::ifstream in(std::string(GPUCTL_FIXTURES_DIR) + "/" + file);
  for (std::string line; std::getline(in, line);) {
    if (auto event = ParseCudaOomMessage(line)) return *event;
  }
  ADD_FAILURE() << "no OOM line in " << file;
  return {};
}

// PyTorch 2.1+'s wording for GPU `gpu` with these figures (GiB).
LogEvent Oom(int gpu, const std::string& tried, const std::string& reserved_unallocated) {
  std::string text = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate " + tried + ". GPU " +
                     std::to_string(gpu) +
                     " has a total capacity of 139.80 GiB of which 11.29 GiB is free. Including non-PyTorch memory, "
                     "this process has 128.51 GiB memory in use. Of the allocated memory 100.00 GiB is allocated "
                     "by PyTorch, and " + reserved_unallocated + " is reserved by PyTorch but unallocated.";
  std::optional<LogEvent> event = ParseCudaOomMessage(text);
  EXPECT_TRUE(event.has_value()) << text;
  return event.value_or(LogEvent{});
}

JobSpec Incident() {
  JobSpec spec;
  spec.name = "dflash";
  spec.command = {"bash", "/root/start_training.sh", "--max-anchors", "1024"};
  spec.gpus = "0,1,2,3,4,5,6,7";
  spec.oom.recover = true;
  return spec;
}

TEST(OomRemediation, TheRealCapturesAreNotFragmentation) {
  LogEvent plain = OomFromCapture("oom-default.log");
  ASSERT_EQ(plain.reserved_unallocated_bytes, uint64_t{0});
  EXPECT_FALSE(IsFragmentation(plain));
  LogEvent expandable = OomFromCapture("oom-expandable.log");
  ASSERT_EQ(expandable.reserved_unallocated_bytes, uint64_t{8} << 20);  // 8 MiB of a 16 GiB request
  EXPECT_FALSE(IsFragmentation(expandable));
}

TEST(OomRemediation, FragmentationIsIdleReserveThatCouldHaveServedOrFivePercent) {
  EXPECT_TRUE(IsFragmentation(Oom(0, "16.00 GiB", "16.00 GiB")));   // as much as asked
  EXPECT_TRUE(IsFragmentation(Oom(0, "64.00 GiB", "7.00 GiB")));    // 5% of 139.80 GiB is 6.99 GiB
  EXPECT_FALSE(IsFragmentation(Oom(0, "64.00 GiB", "6.90 GiB")));
  EXPECT_FALSE(IsFragmentation(LogEvent{}));  // no figures: not known to be
}

// The incident: GPUs 5 and 7 out of memory, not fragmentation. One relaunch
// with both changes the person made by hand.
TEST(OomRemediation, TheIncidentGetsExpandableSegmentsAnd768Anchors) {
  JobSpec spec = Incident();
  LogEvent real = OomFromCapture("oom-default.log");
  LogEvent gpu5 = real, gpu7 = real;
  gpu5.gpu = 5;
  gpu7.gpu = 7;
  OomDecision decision = DecideOomRemediation(spec, {gpu5, gpu7});
  ASSERT_TRUE(decision.relaunch) << decision.reason;
  EXPECT_FALSE(decision.fragmentation);
  EXPECT_THAT(decision.changes, ElementsAre("PYTORCH_CUDA_ALLOC_CONF: (unset) -> expandable_segments:True",
                                            "--max-anchors: 1024 -> 768"));
  JobSpec next = ApplyOomDecision(spec, decision);
  EXPECT_EQ(next.attempt, 2u);
  EXPECT_EQ(next.alloc_conf, "expandable_segments:True");
  EXPECT_EQ(next.gpus, "0,1,2,3,4,5,6,7");  // keeps its GPUs
  EXPECT_THAT(EffectiveCommand(next), ElementsAre("bash", "/root/start_training.sh", "--max-anchors", "768"));
  EXPECT_EQ(EffectiveEnv(next).at("GPUCTL_ATTEMPT"), "2");
  EXPECT_EQ(EffectiveEnv(next).at("PYTORCH_CUDA_ALLOC_CONF"), "expandable_segments:True");

  // The next OOM (conf already set): the anchors alone, 768 -> 576.
  OomDecision again = DecideOomRemediation(next, {gpu5});
  ASSERT_TRUE(again.relaunch);
  EXPECT_THAT(again.changes, ElementsAre("--max-anchors: 768 -> 576"));
}

TEST(OomRemediation, FragmentationIsFixedByTheConfAlone) {
  JobSpec spec = Incident();
  OomDecision decision = DecideOomRemediation(spec, {Oom(5, "16.00 GiB", "20.00 GiB"), Oom(7, "16.00 GiB", "18.00 GiB")});
  ASSERT_TRUE(decision.relaunch);
  EXPECT_TRUE(decision.fragmentation);
  EXPECT_THAT(decision.changes, ElementsAre("PYTORCH_CUDA_ALLOC_CONF: (unset) -> expandable_segments:True"));
  EXPECT_THAT(EffectiveCommand(ApplyOomDecision(spec, decision)), ::testing::Contains("1024"));
  // One GPU really full among fragmented ones: the knobs turn too.
  OomDecision mixed = DecideOomRemediation(spec, {Oom(5, "16.00 GiB", "20.00 GiB"), Oom(7, "16.00 GiB", "0 bytes")});
  EXPECT_FALSE(mixed.fragmentation);
  EXPECT_EQ(mixed.changes.size(), 2u);
}

TEST(OomRemediation, AnExistingConfKeepsItsOtherSettings) {
  JobSpec spec = Incident();
  spec.alloc_conf = "expandable_segments:False,max_split_size_mb:128";
  OomDecision decision = DecideOomRemediation(spec, {Oom(0, "16.00 GiB", "0 bytes")});
  ASSERT_TRUE(decision.alloc_conf.has_value());
  EXPECT_EQ(*decision.alloc_conf, "max_split_size_mb:128,expandable_segments:True");
  EXPECT_TRUE(HasExpandableSegments("max_split_size_mb:128, expandable_segments : True"));
  EXPECT_FALSE(HasExpandableSegments("expandable_segments:True,expandable_segments:False"));  // the last wins
}

TEST(OomRemediation, KnobsRoundAndStopAtTheirMinimum) {
  JobSpec spec;
  spec.name = "j";
  spec.command = {"python3", "train.py", "--batch-size=33", "--max-anchors", "1000"};
  spec.alloc_conf = "expandable_segments:True";
  spec.oom.recover = true;
  spec.oom.knobs = {{"--max-anchors", 0.75, 64}, {"--batch-size", 0.75, 1}, {"--seq-len", 0.5, 128}};
  OomDecision decision = DecideOomRemediation(spec, {Oom(0, "16.00 GiB", "0 bytes")});
  ASSERT_TRUE(decision.relaunch);
  // 750 rounds down to 704, a multiple of 64; 24.75 to 24; --seq-len is not in the command.
  EXPECT_THAT(decision.changes, ElementsAre("--max-anchors: 1000 -> 704", "--batch-size: 33 -> 24"));
  EXPECT_THAT(EffectiveCommand(ApplyOomDecision(spec, decision)),
              ElementsAre("python3", "train.py", "--batch-size=24", "--max-anchors", "704"));

  spec.command = {"python3", "train.py", "--max-anchors", "100"};
  spec.oom.knobs = {};
  EXPECT_THAT(DecideOomRemediation(spec, {}).changes, ElementsAre("--max-anchors: 100 -> 64"));  // 75 -> 64, the minimum
  spec.command = {"python3", "train.py", "--max-anchors", "64"};
  OomDecision stuck = DecideOomRemediation(spec, {});
  EXPECT_FALSE(stuck.relaunch);
  EXPECT_THAT(stuck.reason, ::testing::HasSubstr("--max-anchors is at its minimum (64)"));
}

TEST(OomRemediation, GivesUpWhenTheRetriesAreUsed) {
  JobSpec spec = Incident();
  spec.oom.retries = 2;
  spec.attempt = 3;  // two relaunches already
  OomDecision decision = DecideOomRemediation(spec, {Oom(0, "16.00 GiB", "0 bytes")});
  EXPECT_FALSE(decision.relaunch);
  EXPECT_THAT(decision.reason, ::testing::HasSubstr("the 2 OOM relaunches allowed (--oom-retries) are used"));
}

TEST(OomRemediation, AnchorsGivenWithTheFlagAreTurnedThere) {
  JobSpec spec;
  spec.name = "j";
  spec.script = "/opt/train.sh";
  spec.anchors = 1024;
  spec.oom.recover = true;
  spec.oom.retry_args = {"--resume-from", "latest"};
  JobSpec next = ApplyOomDecision(spec, DecideOomRemediation(spec, {}));
  EXPECT_EQ(next.anchors, uint64_t{768});
  EXPECT_EQ(EffectiveEnv(next).at("GPUCTL_ANCHORS"), "768");
  // The retry args come with every relaunch, once.
  EXPECT_THAT(EffectiveCommand(next), ElementsAre("/opt/train.sh", "--max-anchors", "768", "--resume-from", "latest"));
  next = ApplyOomDecision(next, DecideOomRemediation(next, {}));
  EXPECT_THAT(EffectiveCommand(next), ElementsAre("/opt/train.sh", "--max-anchors", "576", "--resume-from", "latest"));
  EXPECT_THAT(EffectiveCommand(spec), ElementsAre("/opt/train.sh", "--max-anchors", "1024"));
}

TEST(OomRemediation, KnobsAreReadAsFlagFactorMin) {
  auto knob = ParseOomKnob("--batch-size:0.5:8");
  ASSERT_TRUE(knob.ok());
  EXPECT_EQ(knob->flag, "--batch-size");
  EXPECT_EQ(knob->factor, 0.5);
  EXPECT_EQ(knob->min, 8u);
  ASSERT_TRUE(ParseOomKnob("--max-anchors").ok());
  EXPECT_EQ(ParseOomKnob("--max-anchors")->factor, 0.75);
  for (const char* bad : {"batch", "--b:1.5", "--b:0", "--b:x", "--b:0.5:0", "--b:0.5:-1", "--b=3:0.5"}) {
    EXPECT_FALSE(ParseOomKnob(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace gpuctl::train
