#include "agents/train/metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "agents/train/line_splitter.h"
#include "tests/fakes/temp_dir.h"

namespace gpuctl::train {
namespace {

MetricsTracker Tracker(const MetricsPatterns& patterns = {}) {
  Result<MetricsTracker> tracker = MetricsTracker::Create(patterns);
  EXPECT_TRUE(tracker.ok()) << tracker.status().message();
  return std::move(tracker).value();
}

MetricsState After(std::initializer_list<std::string_view> lines) {
  MetricsTracker tracker = Tracker();
  for (std::string_view line : lines) tracker.Observe(line);
  return tracker.state();
}

TEST(MetricsTracker, PlainStepLossTokens) {
  MetricsState s = After({"step 693 | loss 2.104 | 13.8 Ktok/s"});
  EXPECT_EQ(s.step, 693u);
  EXPECT_DOUBLE_EQ(*s.loss, 2.104);
  ASSERT_TRUE(s.throughput.has_value());
  EXPECT_DOUBLE_EQ(s.throughput->value, 13800);
  EXPECT_EQ(s.throughput->unit, "tok/s");
  EXPECT_EQ(s.best_throughput, s.throughput);
  EXPECT_EQ(s.grad_norm, std::nullopt);
  EXPECT_EQ(s.lines_seen, 1u);
}

TEST(MetricsTracker, TokenUnitSpellings) {
  struct Case {
    const char* line;
    double value;
  };
  for (Case c : {Case{"13.8 K tok/s", 13800}, Case{"13.8Ktok/s", 13800}, Case{"1.5 Mtok/s", 1.5e6},
                 Case{"950 tok/s", 950}, Case{"950 tokens/s", 950}, Case{"1,234.5 tokens/s", 1234.5},
                 Case{"12.5 tokens/sec", 12.5}, Case{"2 ktok/s", 2000},
                 Case{"1.2e+03 tokens/s", 1200}, Case{"3E4 tok/s", 30000}}) {
    MetricsState s = After({c.line});
    ASSERT_TRUE(s.throughput.has_value()) << c.line;
    EXPECT_DOUBLE_EQ(s.throughput->value, c.value) << c.line;
    EXPECT_EQ(s.throughput->unit, "tok/s") << c.line;
  }
  MetricsState samples = After({"epoch 1 | 32.5 samples/s"});
  EXPECT_DOUBLE_EQ(samples.throughput->value, 32.5);
  EXPECT_EQ(samples.throughput->unit, "samples/s");
  MetricsState images = After({"410 img/s"});
  EXPECT_EQ(images.throughput, (Throughput{410, "img/s"}));
}

// No rate is negative, but a log that prints one (the job's own arithmetic
// over a clock that went back) is taken as printed: dropping the sign would
// report a speed the job never said it had.
TEST(MetricsTracker, ANegativeThroughputKeepsItsSign) {
  MetricsState s = After({"step 5 | loss 2.1 | -13.8 Ktok/s"});
  EXPECT_EQ(s.step, 5u);
  EXPECT_EQ(s.throughput, (Throughput{-13800, "tok/s"}));
  EXPECT_EQ(After({"-2.5 s/it"}).throughput, (Throughput{-2.5, "s/it"}));
  EXPECT_EQ(After({"speed: -950 tokens/s"}).throughput, (Throughput{-950, "tok/s"}));
  EXPECT_EQ(After({"(-1.2e+03 samples/s)"}).throughput, (Throughput{-1200, "samples/s"}));
  EXPECT_EQ(After({"rate +950 tok/s"}).throughput, (Throughput{950, "tok/s"}));
  // A dash between two numbers or words joins them; it is no sign.
  EXPECT_EQ(After({"epoch 1-13.8 Ktok/s"}).throughput, (Throughput{13800, "tok/s"}));
  EXPECT_EQ(After({"warmup-13.8 Ktok/s"}).throughput, (Throughput{13800, "tok/s"}));
  EXPECT_EQ(After({"12.1-13.8 Ktok/s"}).throughput, (Throughput{13800, "tok/s"}));
  // A negative reading is never the best of a family that had a real one.
  MetricsState after = After({"12 Ktok/s", "-13.8 Ktok/s"});
  EXPECT_EQ(after.throughput, (Throughput{-13800, "tok/s"}));
  EXPECT_EQ(after.best_throughput, (Throughput{12000, "tok/s"}));

  // The default throughput patterns, when other patterns are replaced, read it alike.
  MetricsPatterns patterns;
  patterns.loss = {{R"(L=(\d+\.\d+))", {"L="}}};
  MetricsTracker tracker = Tracker(patterns);
  tracker.Observe("L=0.50 | -13.8 Ktok/s");
  EXPECT_EQ(tracker.state().throughput, (Throughput{-13800, "tok/s"}));
  tracker.Observe("-2.5 s/it");
  EXPECT_EQ(tracker.state().throughput, (Throughput{-2.5, "s/it"}));
  tracker.Observe("epoch 1-13.8 Ktok/s");
  EXPECT_EQ(tracker.state().throughput, (Throughput{13800, "tok/s"}));
}

TEST(MetricsTracker, HuggingFaceTrainerDict) {
  MetricsState s = After({"{'loss': 2.1043, 'grad_norm': 1.2345, 'learning_rate': 4.5e-05, 'epoch': 0.12}"});
  EXPECT_DOUBLE_EQ(*s.loss, 2.1043);
  EXPECT_DOUBLE_EQ(*s.grad_norm, 1.2345);
  EXPECT_EQ(s.step, std::nullopt);
  EXPECT_EQ(s.throughput, std::nullopt);

  MetricsState with_step = After({"{'loss': 1.5, 'grad_norm': 0.5, 'step': 700, 'epoch': 0.2}"});
  EXPECT_EQ(with_step.step, 700u);
  EXPECT_DOUBLE_EQ(*with_step.loss, 1.5);

  // Evaluation and the run's average are not the training loss.
  MetricsState eval = After({"{'loss': 1.5}", "{'eval_loss': 1.9, 'eval_runtime': 3.2}",
                             "val_loss: 1.8 max_steps 1000"});
  EXPECT_DOUBLE_EQ(*eval.loss, 1.5);
  EXPECT_EQ(eval.step, std::nullopt);
  MetricsState train = After({"{'train_runtime': 60.0, 'train_loss': 1.25, 'epoch': 1.0}"});
  EXPECT_DOUBLE_EQ(*train.loss, 1.25);
}

TEST(MetricsTracker, TqdmBars) {
  MetricsState fast = After({" 12%|█▏   | 693/20000 [12:01<5:33:12,  1.04it/s]"});
  EXPECT_EQ(fast.step, 693u);
  EXPECT_EQ(fast.throughput, (Throughput{1.04, "it/s"}));

  MetricsState slow = After({"693/20000 [12:01<5:33:12, 1.04s/it]"});
  EXPECT_EQ(slow.step, 693u);
  EXPECT_EQ(slow.throughput, (Throughput{1.04, "s/it"}));

  MetricsState starting = After({"  0%|          | 0/20000 [00:00<?, ?it/s]"});
  EXPECT_EQ(starting.step, 0u);
  EXPECT_EQ(starting.throughput, std::nullopt);
}

TEST(MetricsTracker, BestIsTheHighestRateAcrossItPerSecondAndSecondsPerIt) {
  MetricsState s = After({"1/9 [00:02<00:16, 2.00s/it]", "2/9 [00:03<00:10, 1.50it/s]",
                          "3/9 [00:06<00:15, 3.00s/it]"});
  EXPECT_EQ(s.step, 3u);
  EXPECT_EQ(s.throughput, (Throughput{3.0, "s/it"}));
  EXPECT_EQ(s.best_throughput, (Throughput{1.5, "it/s"}));

  MetricsState fewer_seconds = After({"1/9 [00:02<00:16, 2.00s/it]", "2/9 [00:03<00:10, 1.50s/it]",
                                      "3/9 [00:06<00:15, 1.80s/it]"});
  EXPECT_EQ(fewer_seconds.best_throughput, (Throughput{1.5, "s/it"}));
}

TEST(MetricsTracker, BestIsKeptPerFamily) {
  MetricsState s = After({"step 1 | 20.0 Ktok/s", "2/9 [00:03<00:10, 5.00it/s]",
                          "step 2 | 10.0 Ktok/s"});
  EXPECT_EQ(s.throughput, (Throughput{10000, "tok/s"}));
  EXPECT_EQ(s.best_throughput, (Throughput{20000, "tok/s"}));
}

TEST(MetricsTracker, MegatronLine) {
  MetricsState s = After({" iteration      693/   20000 | consumed samples:        22176 | elapsed "
                          "time per iteration (ms): 250.3 | learning rate: 1.000E-04 | lm loss: "
                          "2.104000E+00 | loss scale: 1.0 | grad norm: 1.234 |"});
  EXPECT_EQ(s.step, 693u);
  EXPECT_DOUBLE_EQ(*s.loss, 2.104);
  EXPECT_DOUBLE_EQ(*s.grad_norm, 1.234);
}

TEST(MetricsTracker, NanoGptLine) {
  MetricsState s = After({"iter 693: loss 2.1043, time 120.00ms, mfu 45.00%"});
  EXPECT_EQ(s.step, 693u);
  EXPECT_DOUBLE_EQ(*s.loss, 2.1043);
}

TEST(MetricsTracker, KeysAreReadAtWordStartsOnly) {
  // Inside a word a key is no key: not "losses", "xloss", "substep", "1step",
  // nor after a letter that starts a key itself ("tstep", "llr", "glloss").
  MetricsState inside =
      After({"xloss 9 | substep 9 | 1step 9 | losses 9 | _lr 9 | lossy: 9 | tstep 9 | llr 9 | glloss 9"});
  EXPECT_EQ(inside.step, std::nullopt);
  EXPECT_EQ(inside.loss, std::nullopt);
  EXPECT_EQ(inside.learning_rate, std::nullopt);
  // After any byte that is not a letter, digit or '_', it is; the first
  // value of each key counts, and a key with no value is passed over.
  MetricsState after = After({"[x]step=7,loss:(no) -loss:2.5 \"lr\": 3e-4 step 8 train_loss 1.0"});
  EXPECT_EQ(after.step, 7u);
  EXPECT_DOUBLE_EQ(*after.loss, 2.5);
  EXPECT_DOUBLE_EQ(*after.learning_rate, 3e-4);
  // A key that ends the line, a line of one key, a line of none.
  EXPECT_EQ(After({"last step"}).step, std::nullopt);
  EXPECT_EQ(After({"step"}).step, std::nullopt);
  EXPECT_EQ(After({"--- ::: ---"}).step, std::nullopt);
  EXPECT_EQ(After({"Step 12"}).step, 12u);
}

TEST(MetricsTracker, NanLossIsReported) {
  MetricsState s = After({"step 5 | loss 2.0", "step 6 | loss nan"});
  EXPECT_EQ(s.step, 6u);
  ASSERT_TRUE(s.loss.has_value());
  EXPECT_TRUE(std::isnan(*s.loss));
  EXPECT_EQ(s.lines_seen, 2u);
}

TEST(MetricsTracker, ReadsTheFixtureThroughALineSplitter) {
  MetricsTracker tracker = Tracker();
  LineSplitter splitter;
  auto sink = [&](std::string_view line, uint64_t) { tracker.Observe(line); };
  splitter.Feed(testing::ReadFixture("oom-default.log"), 0, sink);
  splitter.Finish(sink);
  EXPECT_EQ(tracker.state().step, 7u);  // "step 7 allocated 128.0 GiB"
  EXPECT_EQ(tracker.state().loss, std::nullopt);
  EXPECT_EQ(tracker.state().lines_seen, 15u);
}

TEST(MetricsTracker, OnlyTheHeadOfALongLineIsSearched) {
  std::string line(MetricsTracker::kMaxScannedBytes, 'x');
  line += " step 5";
  MetricsState s = After({line, "unrelated"});
  EXPECT_EQ(s.step, std::nullopt);
  EXPECT_EQ(s.lines_seen, 2u);
}

TEST(MetricsTracker, CustomPatternsReplaceTheDefaults) {
  MetricsPatterns patterns;
  patterns.loss = {{R"(L=(\d+\.\d+))", {"L="}}};
  patterns.step = {{R"(#(\d+))", {}}};
  patterns.throughput = {{R"((\d+) (frames/s))", {"frames"}}};
  MetricsTracker tracker = Tracker(patterns);
  tracker.Observe("#12 L=0.50 loss 9.0 step 3 24 frames/s");
  EXPECT_EQ(tracker.state().step, 12u);
  EXPECT_DOUBLE_EQ(*tracker.state().loss, 0.5);
  EXPECT_EQ(tracker.state().throughput, (Throughput{24, "frames/s"}));
}

TEST(MetricsTracker, HintsGateThePattern) {
  MetricsPatterns patterns;
  patterns.step = {{R"((\d+))", {"never-there", "nor-this"}}, {R"(at (\d+))", {"xyz", "at "}}};
  MetricsTracker tracker = Tracker(patterns);
  tracker.Observe("42 at 7");
  EXPECT_EQ(tracker.state().step, 7u);
}

TEST(MetricsTracker, RefusesBadPatterns) {
  MetricsPatterns unclosed;
  unclosed.loss = {{"(unclosed", {}}};
  Result<MetricsTracker> r = MetricsTracker::Create(unclosed);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(r.status().message().rfind("loss pattern '(unclosed' is not a valid regular expression (", 0),
            0u)
      << r.status().message();

  MetricsPatterns no_group;
  no_group.step = {{R"(step \d+)", {}}};
  EXPECT_EQ(MetricsTracker::Create(no_group).status().message(),
            "step pattern 'step \\d+' must capture the number in group 1, e.g. loss[=:] *([0-9.]+)");

  MetricsPatterns one_group;
  one_group.throughput = {{R"((\d+) tok/s)", {}}};
  EXPECT_EQ(MetricsTracker::Create(one_group).status().message(),
            "throughput pattern '(\\d+) tok/s' must capture the number in group 1 and the unit in "
            "group 2, e.g. loss[=:] *([0-9.]+)");
}

TEST(MetricsTracker, RefusesMoreThan64Hints) {
  MetricsPatterns patterns;
  patterns.step.clear();
  patterns.loss.clear();  // the defaults bring hints of their own
  patterns.grad_norm.clear();
  patterns.throughput.clear();
  for (int i = 0; i < 65; ++i) patterns.step.push_back({R"(s(\d+))", {"h" + std::to_string(i)}});
  EXPECT_EQ(MetricsTracker::Create(patterns).status().message(),
            "metric patterns have more than 64 distinct hints; share hints between patterns or "
            "drop some");
  patterns.step.pop_back();
  for (MetricPattern& p : patterns.step) p.hints.push_back("shared");  // 65 again, with one shared
  EXPECT_FALSE(MetricsTracker::Create(patterns).ok());
  patterns.step.pop_back();
  EXPECT_TRUE(MetricsTracker::Create(patterns).ok()) << "63 own hints + 1 shared";
}

TEST(NormalizeThroughput, PrefixesAndSpellings) {
  EXPECT_EQ(NormalizeThroughput(13.8, "Ktok/s"), (Throughput{13800, "tok/s"}));
  EXPECT_EQ(NormalizeThroughput(2, "G tokens/s"), (Throughput{2e9, "tok/s"}));
  EXPECT_EQ(NormalizeThroughput(3, "kit/s"), (Throughput{3000, "it/s"}));
  EXPECT_EQ(NormalizeThroughput(3, "samples/sec"), (Throughput{3, "samples/s"}));
  EXPECT_EQ(NormalizeThroughput(3, "s/it"), (Throughput{3, "s/it"}));
  EXPECT_EQ(NormalizeThroughput(3, "frames / s"), (Throughput{3, "frames/s"}));
  EXPECT_TRUE(IsFaster({2, "it/s"}, {1, "s/it"}));
  EXPECT_FALSE(IsFaster({0.5, "it/s"}, {1, "s/it"}));
  EXPECT_FALSE(IsFaster({9, "tok/s"}, {1, "it/s"}));
}

}  // namespace
}  // namespace gpuctl::train
