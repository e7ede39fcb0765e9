#include "agents/build/peak_history.h"

#include <gtest/gtest.h>

#include "common/units.h"
#include "tests/fakes/temp_dir.h"

namespace gpuctl::build {
namespace {

TEST(PeakHistory, RoundTripsThroughItsFile) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/build-peaks.json";
  auto empty = PeakHistory::Load(path);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->size(), 0u);
  empty->Record({{"nvcc", "/src/a.cu (nvcc, 1 archs, 1 threads)", 4000, 0}, {"nvcc", "", 9, 0}, {"ptxas", "b", 0, 0}});
  empty->Record({{"nvcc", "/src/a.cu (nvcc, 1 archs, 1 threads)", 5000, 0}});
  ASSERT_TRUE(empty->Save(path).ok());
  auto loaded = PeakHistory::Load(path);
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(loaded->Peaks(), (std::map<std::string, uint64_t>{{"/src/a.cu (nvcc, 1 archs, 1 threads)", 5000}}));
}

TEST(PeakHistory, ForgetsTheOldestPastItsBound) {
  PeakHistory history;
  for (size_t i = 0; i < kMaxPeakHistory + 5; ++i) history.Record({{"nvcc", "f" + std::to_string(i), 1, 0}});
  EXPECT_EQ(history.size(), kMaxPeakHistory);
  EXPECT_EQ(history.Peaks().count("f0"), 0u);
  EXPECT_EQ(history.Peaks().count("f" + std::to_string(kMaxPeakHistory + 4)), 1u);
  // The order of age survives a reload.
  auto reloaded = PeakHistory::Parse(history.Serialize());
  ASSERT_TRUE(reloaded.ok());
  reloaded->Record({{"nvcc", "new", 1, 0}});
  EXPECT_EQ(reloaded->Peaks().count("f5"), 0u);
  EXPECT_EQ(reloaded->Peaks().count("f6"), 1u);
}

TEST(PeakHistory, HostileFilesAreRefusedOrSkippedNeverThrown) {
  EXPECT_FALSE(PeakHistory::Parse("").ok());
  EXPECT_FALSE(PeakHistory::Parse("[1,2]").ok());
  EXPECT_FALSE(PeakHistory::Parse("{\"peaks\": 3}").ok());
  auto partial = PeakHistory::Parse(R"({"peaks": [["ok", 7], ["neg", -1], [1, 2], ["short"], "x"]})");
  ASSERT_TRUE(partial.ok());
  EXPECT_EQ(partial->Peaks(), (std::map<std::string, uint64_t>{{"ok", 7}}));
  // A source path with bytes that are not UTF-8 still serializes.
  PeakHistory history;
  history.Record({{"nvcc", std::string("/src/\xff\xfe.cu"), 5, 0}});
  EXPECT_FALSE(history.Serialize().empty());
}

TEST(PeakHistory, KeepsTheHighestPeakOfASource) {
  // A compile killed part-way (a stopped build) must not lower the promise.
  PeakHistory history;
  history.Record({{"nvcc", "k", 6000, 0}});
  history.Record({{"nvcc", "k", 900, 0}});
  EXPECT_EQ(history.Peaks().at("k"), 6000u);
}

TEST(PeakHistory, KeepsEachSourcesLongestRunningTimeThroughItsFile) {
  PeakHistory history;
  history.Record({{"nvcc", "k", 6000, 120.5}, {"nvcc", "j", 10, 0}});
  history.Record({{"nvcc", "k", 6000, 30}});  // stopped part-way
  auto reloaded = PeakHistory::Parse(history.Serialize());
  ASSERT_TRUE(reloaded.ok());
  EXPECT_EQ(reloaded->Seconds(), (std::map<std::string, double>{{"k", 120.5}})) << "j's time is unknown";
  EXPECT_EQ(reloaded->Peaks().at("j"), 10u);
}

TEST(PeakHistory, ReadsFilesWrittenBeforeRunningTimesWereKept) {
  auto old = PeakHistory::Parse(R"({"peaks": [["a", 7], ["b", 8, 42.5], ["c", 9, "x"], ["d", 1, -3]]})");
  ASSERT_TRUE(old.ok());
  EXPECT_EQ(old->Peaks(), (std::map<std::string, uint64_t>{{"a", 7}, {"b", 8}, {"c", 9}, {"d", 1}}));
  EXPECT_EQ(old->Seconds(), (std::map<std::string, double>{{"b", 42.5}}));
}

TEST(PeakHistory, KeepsTheCurveOfEachSourcesLongestRunThroughItsFile) {
  PeakHistory history;
  const CompileCurve full{.steps = {kMiB, 6 * kMiB, kMiB + 1}, .peak_passed_step = 2, .ended = true};
  const CompileCurve cut{.steps = {kMiB, 6 * kMiB}, .peak_passed_step = 1, .ended = true};
  history.Record({{.program = "nvcc", .source = "k", .peak_bytes = 6 * kMiB, .run_seconds = 6, .curve = full}});
  history.Record({{.program = "nvcc", .source = "k", .peak_bytes = 6 * kMiB, .run_seconds = 4, .curve = cut}});
  auto reloaded = PeakHistory::Parse(history.Serialize());
  ASSERT_TRUE(reloaded.ok());
  std::map<std::string, CompileCurve> curves = reloaded->Curves();
  ASSERT_EQ(curves.count("k"), 1u);
  // Whole MiB on disk, rounded up.
  EXPECT_EQ(curves["k"].steps, (std::vector<uint64_t>{kMiB, 6 * kMiB, 2 * kMiB}));
  EXPECT_EQ(curves["k"].peak_passed_step, 2);
  EXPECT_TRUE(curves["k"].ended);
}

TEST(PeakHistory, ABadCurveIsDroppedAndItsPeakKept) {
  auto parsed = PeakHistory::Parse(
      R"({"peaks": [["a", 7, 1, 5, [1, 2]], ["b", 8, 1, 0, [1, -2]], ["c", 9, 1, "x", [1]], ["d", 3, 1, 0, [4]]]})");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->Peaks().size(), 4u);
  std::map<std::string, CompileCurve> curves = parsed->Curves();
  ASSERT_EQ(curves.size(), 1u);
  EXPECT_EQ(curves["d"].steps, std::vector<uint64_t>{4 * kMiB});
}

}  // namespace
}  // namespace gpuctl::build
