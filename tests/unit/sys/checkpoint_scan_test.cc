#include "agents/sys/checkpoint_scan.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

#include "tests/fakes/temp_dir.h"

namespace gpuctl::sys {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

// A fixed "now", far from the wall clock: every mtime a test relies on is set.
constexpr int64_t kNow = 2'000'000'000'000;
constexpr int64_t kHour = 3'600'000;

class CheckpointFinderTest : public ::testing::Test {
 protected:
  // Canonical, as the finder reports paths.
  std::string Path(const std::string& relative) const { return (root_ / relative).string(); }

  void Write(const std::string& relative, const std::string& content = "x") { tmp_.WriteFile(relative, content); }

  // Sets the mtime of `relative` and everything under it to `age_ms` before kNow.
  void Age(const std::string& relative, int64_t age_ms) {
    const auto when = std::chrono::file_clock::from_sys(
        std::chrono::sys_time<std::chrono::milliseconds>(std::chrono::milliseconds(kNow - age_ms)));
    const fs::path top = root_ / relative;
    if (fs::is_directory(fs::symlink_status(top))) {
      for (const auto& entry : fs::recursive_directory_iterator(top)) {
        if (!entry.is_symlink()) fs::last_write_time(entry.path(), when);
      }
    }
    fs::last_write_time(top, when);
  }

  CheckpointScanOptions Options() const {
    CheckpointScanOptions opts;
    opts.dir = tmp_.path();
    opts.now_unix_ms = kNow;
    return opts;
  }

  std::string LatestPath(const CheckpointScanOptions& opts) const {
    std::optional<Checkpoint> found = FindLatestCompleteCheckpoint(opts);
    return found ? found->path : "(none)";
  }
  std::string LatestPath() const { return LatestPath(Options()); }

  // The candidate at `relative`; fails the test when there is none.
  CheckpointCandidate CandidateAt(const std::string& relative, const CheckpointScanOptions& opts) const {
    for (const CheckpointCandidate& c : ScanCheckpoints(opts)) {
      if (c.checkpoint.path == Path(relative)) return c;
    }
    ADD_FAILURE() << "no candidate " << relative;
    return {};
  }
  CheckpointCandidate CandidateAt(const std::string& relative) const { return CandidateAt(relative, Options()); }

  TempDir tmp_;
  fs::path root_ = fs::canonical(tmp_.path());
};

TEST_F(CheckpointFinderTest, HfWithoutTrainerStateIsSkippedForAnOlderCompleteOne) {
  Write("checkpoint-100/model.safetensors");
  Write("checkpoint-100/trainer_state.json", "{}");
  Write("checkpoint-200/model.safetensors");
  Age("checkpoint-100", 2 * kHour);
  Age("checkpoint-200", kHour);  // old and quiet, yet partial

  std::optional<Checkpoint> found = FindLatestCompleteCheckpoint(Options());
  ASSERT_TRUE(found);
  EXPECT_EQ(found->path, Path("checkpoint-100"));
  EXPECT_EQ(found->format, "hf");
  EXPECT_EQ(found->step, 100u);
  EXPECT_EQ(found->bytes, 3u);
  EXPECT_EQ(found->mtime_unix_ms, kNow - 2 * kHour);

  CheckpointCandidate partial = CandidateAt("checkpoint-200");
  EXPECT_FALSE(partial.complete);
  EXPECT_EQ(partial.checkpoint.format, "hf");
  EXPECT_NE(partial.why_not.find("trainer_state.json"), std::string::npos) << partial.why_not;
}

TEST_F(CheckpointFinderTest, HfTrainerStateOpenForWriteIsNotComplete) {
  Write("checkpoint-100/trainer_state.json", "{}");
  Write("checkpoint-200/trainer_state.json", "{}");
  CheckpointScanOptions opts = Options();
  opts.open_for_write = {Path("checkpoint-200/trainer_state.json")};
  EXPECT_EQ(LatestPath(opts), Path("checkpoint-100"));
  EXPECT_EQ(LatestPath(), Path("checkpoint-200"));
}

TEST_F(CheckpointFinderTest, HfTrainerStateCutShortByAKillIsNotComplete) {
  // What a SIGKILL leaves of {"global_step": 300, ...} written by one
  // truncate-and-write: nothing, or a prefix (a page, or json.dump's chunks).
  const std::string whole =
      "{\"global_step\": 300, \"note\": \"a } and a \\\" in a string\", \"log_history\": [{\"loss\": 1.5}, {}]}\n";
  Write("checkpoint-100/trainer_state.json", "{\"global_step\": 100}");
  Write("checkpoint-200/trainer_state.json", whole);
  EXPECT_EQ(LatestPath(), Path("checkpoint-200")) << "braces and quotes within strings do not count";
  for (size_t cut = 0; cut + 1 < whole.size(); ++cut) {
    Write("checkpoint-200/trainer_state.json", whole.substr(0, cut));
    ASSERT_EQ(LatestPath(), Path("checkpoint-100")) << "cut at " << cut << ": " << whole.substr(0, cut);
  }
  CheckpointCandidate partial = CandidateAt("checkpoint-200");
  EXPECT_FALSE(partial.complete);
  EXPECT_NE(partial.why_not.find("cut short"), std::string::npos) << partial.why_not;
  Write("checkpoint-200/trainer_state.json", whole + "trailing");
  EXPECT_EQ(LatestPath(), Path("checkpoint-100")) << "what follows the object is not a whole state";
  Write("checkpoint-200/trainer_state.json", "{\"log_history\": [{\"grad_norm\": NaN, \"loss\": Infinity}]}");
  EXPECT_EQ(LatestPath(), Path("checkpoint-200")) << "Python's json writes a NaN loss so; the save is whole";
}

TEST_F(CheckpointFinderTest, ALargeHfTrainerStateIsJudgedByItsEnd) {
  // Over 1 MiB only the last bytes are read: they must close the object
  // (so a cut just after an inner '}' passes; states that large are rare).
  std::string history = "{\"log_history\": [";
  while (history.size() < (1u << 20) + 100) history += "{\"loss\": 1.25, \"step\": 10}, ";
  history += "{}]}";
  Write("checkpoint-100/trainer_state.json", "{}");
  Write("checkpoint-200/trainer_state.json", history);
  EXPECT_EQ(LatestPath(), Path("checkpoint-200"));
  Write("checkpoint-200/trainer_state.json", history.substr(0, history.size() - 4));  // "..., "
  EXPECT_EQ(LatestPath(), Path("checkpoint-100"));
}

TEST_F(CheckpointFinderTest, StepsOrderNumericallyNotByNameOrMtime) {
  Write("checkpoint-9/trainer_state.json", "{}");
  Write("checkpoint-10/trainer_state.json", "{}");
  Age("checkpoint-10", 2 * kHour);
  Age("checkpoint-9", kHour);  // newer mtime, lower step
  EXPECT_EQ(LatestPath(), Path("checkpoint-10"));
}

TEST_F(CheckpointFinderTest, DcpIsCompleteOnlyWithMetadata) {
  Write("step_5/__0_0.distcp");
  Write("step_5/.metadata");
  Write("step_6/__0_0.distcp");
  Age("step_5", 2 * kHour);
  Age("step_6", kHour);  // quiet, but DCP writes .metadata last

  std::optional<Checkpoint> found = FindLatestCompleteCheckpoint(Options());
  ASSERT_TRUE(found);
  EXPECT_EQ(found->path, Path("step_5"));
  EXPECT_EQ(found->format, "dcp");
  CheckpointCandidate partial = CandidateAt("step_6");
  EXPECT_FALSE(partial.complete);
  EXPECT_EQ(partial.checkpoint.format, "dcp");
  EXPECT_NE(partial.why_not.find(".metadata"), std::string::npos) << partial.why_not;
}

TEST_F(CheckpointFinderTest, DeepSpeedLatestWinsOverANewerPartialStep) {
  Write("latest", "global_step20\n");
  Write("global_step10/mp_rank_00_model_states.pt");
  Write("global_step20/mp_rank_00_model_states.pt");
  Write("global_step30/zero_pp_rank_0_mp_rank_00_optim_states.pt");
  Write("zero_to_fp32.py");
  Age("global_step10", 3 * kHour);
  Age("global_step20", 2 * kHour);
  Age("global_step30", kHour);

  std::optional<Checkpoint> found = FindLatestCompleteCheckpoint(Options());
  ASSERT_TRUE(found);
  EXPECT_EQ(found->path, Path("global_step20"));
  EXPECT_EQ(found->format, "deepspeed");
  EXPECT_EQ(found->step, 20u);
  EXPECT_FALSE(CandidateAt("global_step30").complete);
  EXPECT_FALSE(CandidateAt("global_step10").complete);
  for (const CheckpointCandidate& c : ScanCheckpoints(Options())) {
    EXPECT_NE(c.checkpoint.path, Path("zero_to_fp32.py"));
  }
}

TEST_F(CheckpointFinderTest, DeepSpeedTreeAsAChildOfTheDir) {
  Write("run/latest", "global_step7");
  Write("run/global_step7/model.pt");
  Write("run/global_step8/model.pt");
  EXPECT_EQ(LatestPath(), Path("run/global_step7"));
}

TEST_F(CheckpointFinderTest, DeepSpeedLatestNamingNothingChoosesNothing) {
  Write("latest", "global_step99");
  Write("global_step10/model.pt");
  Age("global_step10", kHour);
  EXPECT_EQ(LatestPath(), "(none)");
  // The tree itself is listed, saying why.
  std::vector<CheckpointCandidate> all = ScanCheckpoints(Options());
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].checkpoint.path, root_.string());
  EXPECT_NE(all[0].why_not.find("'global_step99'"), std::string::npos) << all[0].why_not;
}

TEST_F(CheckpointFinderTest, MarkerMakesADirectoryCompleteAndIsThenRequired) {
  Write("save_1/DONE");
  Write("save_2/weights.bin");
  Write("save_2/DONE");
  Write("save_3/weights.bin");
  Age("save_1", 3 * kHour);
  Age("save_2", 1000);    // recent: the marker overrides the quiet rule
  Age("save_3", kHour);   // quiet, but no marker
  CheckpointScanOptions opts = Options();
  opts.complete_marker = "DONE";

  std::optional<Checkpoint> found = FindLatestCompleteCheckpoint(opts);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->path, Path("save_2"));
  EXPECT_EQ(found->format, "marker");
  EXPECT_FALSE(CandidateAt("save_3", opts).complete);
  // Without a marker configured, save_3 is a quiet plain checkpoint.
  EXPECT_EQ(LatestPath(), Path("save_3"));
}

TEST_F(CheckpointFinderTest, PlainFileMustBeQuiet) {
  Write("model_100.pt");
  Write("model_200.pt");
  Age("model_100.pt", kHour);
  Age("model_200.pt", 5'000);
  EXPECT_EQ(LatestPath(), Path("model_100.pt"));
  EXPECT_NE(CandidateAt("model_200.pt").why_not.find("changed 5s ago"), std::string::npos);

  CheckpointScanOptions later = Options();
  later.now_unix_ms = kNow + 60'000;
  std::optional<Checkpoint> found = FindLatestCompleteCheckpoint(later);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->path, Path("model_200.pt"));
  EXPECT_EQ(found->format, "plain");
  EXPECT_EQ(found->step, 200u);
}

TEST_F(CheckpointFinderTest, PlainOpenForWriteIsNotComplete) {
  Write("model_100.pt");
  Write("model_200.pt");
  Write("dir_300/shard0.bin");
  Age("model_100.pt", 3 * kHour);
  Age("model_200.pt", 2 * kHour);
  Age("dir_300", kHour);
  CheckpointScanOptions opts = Options();
  opts.open_for_write = {Path("model_200.pt"), Path("dir_300/shard0.bin")};
  EXPECT_EQ(LatestPath(opts), Path("model_100.pt"));
  EXPECT_EQ(LatestPath(), Path("dir_300"));
}

TEST_F(CheckpointFinderTest, TemporaryNamesAreNeverComplete) {
  Write("step_100/w.bin");
  Write("tmp-checkpoint-400/trainer_state.json", "{}");
  Write(".step_500/w.bin");
  Write("step_600.partial/w.bin");
  Write("step_700.tmp");
  Write("step_800.incomplete/w.bin");
  for (const char* name : {"step_100", "tmp-checkpoint-400", ".step_500", "step_600.partial", "step_700.tmp",
                           "step_800.incomplete"}) {
    Age(name, kHour);
  }
  EXPECT_EQ(LatestPath(), Path("step_100"));
  EXPECT_EQ(CandidateAt("step_700.tmp").why_not, "a temporary name");
}

TEST_F(CheckpointFinderTest, SymlinksAreNeitherCandidatesNorFollowed) {
  Write("checkpoint-100/trainer_state.json", "{}");
  Write("checkpoint-100/model.bin", "12345");
  fs::create_directory_symlink(root_ / "checkpoint-100", root_ / "latest-checkpoint");
  fs::create_directory_symlink(root_, root_ / "checkpoint-100" / "loop");

  std::vector<CheckpointCandidate> all = ScanCheckpoints(Options());
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].checkpoint.path, Path("checkpoint-100"));
  EXPECT_EQ(all[0].checkpoint.bytes, 5u + 2u);  // the loop link is not walked into
}

TEST_F(CheckpointFinderTest, EmptyOrMissingDirGivesNothing) {
  EXPECT_EQ(LatestPath(), "(none)");
  EXPECT_TRUE(ScanCheckpoints(Options()).empty());
  CheckpointScanOptions missing = Options();
  missing.dir = Path("no/such/dir");
  EXPECT_EQ(LatestPath(missing), "(none)");
  missing.dir = "";
  EXPECT_EQ(LatestPath(missing), "(none)");
  Write("a_file");
  missing.dir = Path("a_file");
  EXPECT_TRUE(ScanCheckpoints(missing).empty());
}

TEST_F(CheckpointFinderTest, MaxEntriesBoundsTheWalk) {
  // The highest step is walked first.
  Write("step_1/f");
  for (int i = 0; i < 50; ++i) Write("step_2/f" + std::to_string(i));
  Age("step_1", kHour);
  Age("step_2", kHour);
  CheckpointScanOptions opts = Options();
  opts.max_entries = 10;
  std::vector<CheckpointCandidate> all = ScanCheckpoints(opts);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_FALSE(all[0].complete);
  EXPECT_NE(all[0].why_not.find("not examined"), std::string::npos) << all[0].why_not;
  EXPECT_FALSE(all[1].complete);
  EXPECT_NE(all[1].why_not.find("too large to check it is quiet"), std::string::npos) << all[1].why_not;
  EXPECT_EQ(LatestPath(), Path("step_2"));
}

// How fast: tests/bench/checkpoint_scan_bench (timing stays out of tests).
TEST_F(CheckpointFinderTest, AThousandCheckpointsGiveTheNewest) {
  for (int i = 0; i < 1000; ++i) {
    const std::string dir = "checkpoint-" + std::to_string(i);
    for (int f = 0; f < 9; ++f) Write(dir + "/shard" + std::to_string(f));
    Write(dir + "/trainer_state.json", "{}");
  }
  std::optional<Checkpoint> found = FindLatestCompleteCheckpoint(Options());
  ASSERT_TRUE(found);
  EXPECT_EQ(found->path, Path("checkpoint-999"));
}

TEST(CheckpointStepFromName, TakesTheNumberAtTheEnd) {
  EXPECT_EQ(StepFromName("checkpoint-1200"), 1200u);
  EXPECT_EQ(StepFromName("global_step1200"), 1200u);
  EXPECT_EQ(StepFromName("step_7"), 7u);
  EXPECT_EQ(StepFromName("step-7"), 7u);
  EXPECT_EQ(StepFromName("epoch3"), 3u);
  EXPECT_EQ(StepFromName("model_step100.pt"), 100u);
  EXPECT_EQ(StepFromName("final"), std::nullopt);
  EXPECT_EQ(StepFromName("model.pt"), std::nullopt);
  EXPECT_EQ(StepFromName("step_99999999999999999999999"), std::nullopt);
}

TEST(CheckpointOpenForWrite, ReadsFdTargetsWithWriteFlags) {
  TempDir proc;
  proc.MakeDir("proc/4242/fd");
  auto fd = [&](const std::string& n, const std::string& target, const std::string& flags) {
    fs::create_symlink(target, proc.path() + "/proc/4242/fd/" + n);
    if (!flags.empty()) proc.WriteFile("proc/4242/fdinfo/" + n, "pos:\t0\nflags:\t" + flags + "\nmnt_id:\t25\n");
  };
  fd("3", "/data/ckpt/model.pt", "0100001");   // O_WRONLY
  fd("4", "/data/ckpt/read.pt", "0100000");    // read only
  fd("5", "/data/ckpt/rdwr.pt", "02");         // O_RDWR
  fd("6", "pipe:[12345]", "01");
  fd("7", "/data/ckpt/closed.pt", "");         // closed between listing and reading

  sys::HostFs host(proc.path());
  EXPECT_EQ(OpenForWrite(4242, host), (std::set<std::string>{"/data/ckpt/model.pt", "/data/ckpt/rdwr.pt"}));
  EXPECT_TRUE(OpenForWrite(4243, host).empty());
  EXPECT_TRUE(OpenForWrite(0, host).empty());
}

TEST(CheckpointOpenForWrite, SeesThisProcessWriting) {
  TempDir dir;
  const std::string writing = fs::canonical(dir.path()).string() + "/shard0";
  std::ofstream out(writing);
  ASSERT_TRUE(out.is_open());
  EXPECT_TRUE(OpenForWrite(getpid()).contains(writing));
  out.close();
  EXPECT_FALSE(OpenForWrite(getpid()).contains(writing));
}

TEST(CheckpointOpenForWrite, ParsesFdinfoFlags) {
  EXPECT_EQ(ParseFdinfoFlags("pos:\t0\nflags:\t0100001\nmnt_id:\t25\n"), 0100001u);
  EXPECT_EQ(ParseFdinfoFlags("flags:\t02\n"), 02u);
  EXPECT_EQ(ParseFdinfoFlags("pos:\t0\n"), std::nullopt);
  EXPECT_EQ(ParseFdinfoFlags("flags:\tzz\n"), std::nullopt);
}

TEST(CheckpointSignature, ChangesWhenAFileGrows) {
  TempDir dir;
  dir.WriteFile("ckpt/shard0", "abc");
  const TreeSignature before = SignatureOf(dir.path());
  EXPECT_EQ(before.bytes, 3u);
  EXPECT_EQ(before.entries, 3u);  // the dir, ckpt, shard0
  EXPECT_EQ(SignatureOf(dir.path()), before);

  dir.WriteFile("ckpt/shard0", "abcdef");
  const TreeSignature after = SignatureOf(dir.path());
  EXPECT_EQ(after.bytes, 6u);
  EXPECT_NE(after, before);
  EXPECT_EQ(SignatureOf(dir.path() + "/missing"), TreeSignature{});
}

}  // namespace
}  // namespace gpuctl::sys
