// The live build governor's policy: which compile trees of a build may run
// now so that what they may still reach fits the build's memory budget.
// Pure and tick-driven (no clock, no /proc): the agent's BuildWatch feeds it
// what it reads from a build's cgroup, and the trace-replay simulator
// (tests/support/build_sim.h) feeds it recorded traces; both get the same
// decisions from this one class.
//
// Why live: a compile's memory is a peak then a long low tail (the real
// traces in ../shared/fixtures/gpu-host/nvcc-memtrace-*.csv peak at 16-38% of
// the compile and average 0.22-0.36 of the peak). Reserving the peak for the
// whole compile, as a static MAX_JOBS does, holds back 3-4x what is used.
//
// Each tick:
//  - every tree gets a predicted peak: its source file's peak from an
//    earlier build, else, once two of its family (FileFamily) have passed
//    theirs, the highest of its family's peaks, else the highest of its
//    peers' (same program, archs and threads), else the model (nvcc:
//    kNvccPeakOneArchBytes x min(threads, archs); anything else: twice what
//    it has shown, at least 1 GiB); never less than it has already shown;
//  - nvcc compiles its archs min(threads, archs) at a time, in waves, each
//    a peak (cicc) then a low tail (ptxas, the host compile). A wave has
//    passed once memory rose past 40% of its prediction and fell back to
//    half of what it reached, or once its cicc runs ended (the agent sees
//    the processes; the curve may run at most one wave ahead of them). After it the tree
//    reserves its tail, max(1.25 x now, 1.1 x the tail's high), plus the
//    next wave's peak if one is left;
//  - trees are admitted first-fit, tails first, then the longest expected
//    (an earlier build's running time of the file; unknown counts as
//    longest: it may be), then oldest first, while
//    what they hold now plus what the admitted may still grow fits
//    budget - headroom - memory outside trees. The first is always admitted:
//    work is never stopped while one tree can run;
//  - admitted trees that are paused resume, the others pause (SIGSTOP holds
//    their memory but stops its growth; the youngest, still small, go first).
// A build fails only when its one running tree cannot fit: memory is at the
// budget with nothing else left to pause, or an earlier build of the same
// file peaked above the budget.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agents/build/cuda_arch.h"
#include "agents/build/memory_curve.h"

namespace gpuctl::build {

struct TreeSample {
  std::string id;          // stable for the tree's life: "PID:STARTTIME"
  std::string program;     // "nvcc", "g++", "ptxas"
  std::string source;      // the file compiled, for the per-source history; may be empty
  uint32_t archs = 0;      // nvcc targets; 0 unknown
  uint32_t threads = 1;    // nvcc --threads
  uint64_t rss_bytes = 0;  // the whole tree, now
  bool stopped = false;    // found stopped: an agent restarted while it was paused
  // nvcc: how many of its cicc runs (one per arch, the peak of each) have
  // ended, when the caller sees its processes. Unset: peaks are read from
  // the memory curve alone (the simulator's recorded traces).
  std::optional<uint32_t> device_compiles_done{};
  // Its processes on a CPU or waiting for one; 0: unknown. With more than
  // the build's cores busy, every compile runs slower than its curve.
  uint32_t busy = 0;
};

struct GovernorConfig {
  uint64_t budget_bytes = 0;    // the build's memory: its cgroup limit
  // Kept free below the budget for growth between ticks (a compile grows up
  // to ~0.9 GiB/s in the traces) and for estimates that are off.
  uint64_t headroom_bytes = 0;
  uint64_t nvcc_peak_one_arch_bytes = kNvccPeakOneArchBytes;
  uint64_t unknown_floor_bytes = uint64_t{1} << 30;
  // The caller's tick: a compile's running time is counted in ticks it ran.
  double tick_seconds = 0.25;
  // The build's cores; 0: unknown (compiles count as never slowed).
  uint32_t cores = 0;
};

// The default headroom for a budget: 5% of it, at least 1 GiB, at most 8 GiB,
// and never more than a quarter of it.
uint64_t DefaultHeadroom(uint64_t budget_bytes);

struct GovernorDecision {
  std::vector<std::string> pause;   // ids to stop now
  std::vector<std::string> resume;  // ids to continue now
  std::optional<std::string> fail;  // the build cannot fit: why, with the figures
  uint64_t planned_bytes = 0;       // held now plus what the admitted may still grow
  uint32_t running = 0;
  uint32_t paused = 0;
};

// The per-source history's key: the source with what shapes its memory
// (program, archs, threads); empty for a tree without a source.
std::string HistoryKey(const TreeSample& tree);

// A source's family: the words of its file's name less its extension (runs
// of letters and digits) but those with a digit, which name the template
// parameters of generated kernel files (hdim128, bf16, sm80):
// flash_bwd_hdim64_fp16_sm80.cu is of the family "flash_bwd". One template's
// files peak alike, and the heaviest of a build's files may be another
// template's (five archs: a fwd file peaks at 16.7 GiB, a bwd file at 26).
// Empty for a tree without a source, or a name with no word left (sm80.cu):
// such a file has no family.
std::string FileFamily(const TreeSample& tree);

// A compile that ended, with the highest memory it showed.
struct FinishedCompile {
  std::string program;
  std::string source;  // its HistoryKey
  uint64_t peak_bytes = 0;
  double run_seconds = 0;  // how long it ran, paused time left out
  CompileCurve curve = {};  // its memory over its running time
};

class BuildGovernor {
 public:
  // `source_peaks`, `source_seconds`: peaks and running times of earlier
  // builds, by HistoryKey.
  // `source_curves`: their memory over time, for a forecast of each.
  explicit BuildGovernor(GovernorConfig config, std::map<std::string, uint64_t> source_peaks = {},
                         std::map<std::string, double> source_seconds = {},
                         std::map<std::string, CompileCurve> source_curves = {});

  // `trees`: every compile tree of the build now; a tree missing from it has
  // ended. `other_bytes`: the build's memory outside its trees.
  GovernorDecision Tick(const std::vector<TreeSample>& trees, uint64_t other_bytes);

  // The peak the tree is expected to reach (it must have been in a Tick).
  uint64_t PredictedPeak(const std::string& id) const;
  // Compiles that ended since the last call.
  std::vector<FinishedCompile> TakeFinished();
  uint64_t pauses() const { return pauses_; }
  double margin() const { return margin_; }
  const GovernorConfig& config() const { return config_; }

 private:
  struct Tracked {
    uint64_t age = 0;  // order of first sight
    TreeSample last;
    std::string peer_key;    // PeerKey, computed once
    std::string family_key;  // FamilyPeersKey, computed once; empty: no family
    uint64_t peak_rss = 0;
    uint32_t waves_done = 0;   // waves whose peak has passed
    uint32_t curve_waves = 0;  // as the memory curve alone shows them
    bool in_wave = false;
    uint64_t wave_max = 0;       // of the wave under way
    uint64_t tail_max = 0;       // since the last wave ended
    bool paused = false;
    uint64_t run_ticks = 0;  // ticks it was let run
    // Ticks of its own progress: a tick run with the cores shared among
    // more busy processes than there are counts the share it got.
    double progress = 0;
    CompileCurve curve;  // by steps of progress
    // What its forecast said it would hold at most in the step under way
    // (0: no forecast from a curve): how wrong that was teaches the margin.
    uint64_t forecast_now = 0;
  };
  struct PeerPeaks {
    uint64_t max = 0;
    uint32_t count = 0;
  };
  static std::string PeerKey(const TreeSample& tree);
  // Its family's peers: the same PeerKey and FileFamily.
  static std::string FamilyPeersKey(const TreeSample& tree);
  // The peers it teaches: its PeerKey, and its FamilyPeersKey if it has one.
  static std::vector<std::string_view> PeerKeys(const Tracked& tracked);
  // A tree's first peak passed or it ended: one more peak for its peers and family.
  void CountPeak(const Tracked& tracked, uint64_t peak_bytes);
  // nvcc compiles its archs `parallel` at a time (--threads), in waves;
  // anything else is one wave of one lane.
  struct Waves {
    uint32_t parallel = 1;
    uint32_t archs = 1;
    uint32_t count() const;
    uint32_t lanes(uint32_t wave) const;  // 0 past the last
    // Waves whose every arch's device compile has ended.
    uint32_t completed(uint32_t device_compiles_done) const;
  };
  static Waves WavesOf(const TreeSample& tree);
  uint64_t Model(const TreeSample& tree) const;
  // The whole tree's peak (its first, fullest wave).
  uint64_t Predict(const Tracked& tracked) const;
  uint64_t WavePeak(const Tracked& tracked, uint32_t wave) const;
  bool PastPeaks(const Tracked& tracked) const;
  uint64_t Reservation(const Tracked& tracked) const;
  // From an earlier build; unknown: a negative number.
  double ExpectedSeconds(const Tracked& tracked) const;
  void Observe(Tracked& tracked, const TreeSample& sample);
  // What it will hold from now: from its file's curve in an earlier build,
  // else from its peers' curves in this one, else its Reservation for ever.
  Forecast ForecastFor(const Tracked& tracked) const;
  // Shapes of each PeerKey and FamilyPeersKey from this build's compiles past their peak.
  void LearnShapes();
  void Forget(const std::vector<TreeSample>& trees);
  // Advances the progress of the trees that ran since the last tick.
  void Progress(const std::vector<TreeSample>& trees);

  GovernorConfig config_;
  std::map<std::string, uint64_t> source_peaks_;
  std::map<std::string, double> source_seconds_;
  std::map<std::string, PeerPeaks> peers_;  // by PeerKey and by FamilyPeersKey
  std::map<std::string, CurveShape> source_shapes_;  // by HistoryKey
  // Both by PeerKey and by FamilyPeersKey:
  std::map<std::string, std::vector<CompileCurve>> finished_curves_;  // past their peak
  std::map<std::string, CurveShape> peer_shapes_;
  uint32_t step_ticks_ = 1;
  // Forecasts from curves are scaled by this: the most a compile ran over
  // its forecast lately (decaying towards 1 as forecasts hold).
  double margin_ = 1.0;
  // Measures the forecasts of the last tick against what the trees hold.
  void LearnMargin();
  std::map<std::string, Tracked> trees_;
  std::vector<FinishedCompile> finished_;
  uint64_t next_age_ = 0;
  uint64_t pauses_ = 0;
};

}  // namespace gpuctl::build
