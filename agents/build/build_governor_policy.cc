#include "agents/build/build_governor_policy.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string_view>

#include "common/units.h"

namespace gpuctl::build {
namespace {

uint64_t Scale(uint64_t bytes, double factor) { return static_cast<uint64_t>(static_cast<double>(bytes) * factor); }
uint64_t Less(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

// A wave's peak is seen once memory has passed 40% of the prediction (a
// light kernel peaks at 3 GiB against the model's 6.5) and fallen back to
// half of what it reached.
constexpr double kWaveStart = 0.4;
constexpr double kWaveEnd = 0.5;
// Margins on learned peaks: a peer or an earlier build is a good guess, not
// a bound.
constexpr double kPeerMargin = 1.15;
constexpr double kHistoryMargin = 1.1;
// A family's peaks stand for its files once two have shown theirs, with a
// wider margin than a peer's: the first to show theirs may be its lightest
// (ninja runs a family in its parameters' order), and its files differ in
// them (the traces' bwd files, head dim 64 to 256: 5.9 to 6.5 GiB an arch,
// 1.11x). Five archs: 533 s at 1.15, 539 s at 1.3.
constexpr uint32_t kFamilyPeers = 2;
constexpr double kFamilyMargin = 1.3;
// A forecast from peers needs this many past their peak: one may be a light file.
constexpr size_t kShapePeers = 2;
// Past the part of the shape peers have shown, a tail may rise this much over
// their highest.
constexpr double kTailMargin = 1.25;
constexpr long kDropSteps = 2;
// What a running compile must fit: the next steps, before a later tick can act.
constexpr size_t kNearSteps = 2;
// The learned margin: what counts, how fast it forgets, and its ceiling.
constexpr uint64_t kMarginFloorBytes = uint64_t{1} << 30;
constexpr double kMarginDecay = 0.995;  // a tick's: half gone in ~35 s at 0.25 s
constexpr double kMaxMargin = 1.5;

// Whether the memory curve alone can tell `wave`'s peak. A wave with fewer
// lanes than the one before (5 archs on 4 threads: the fifth arch alone)
// peaks no higher than the earlier wave's four tails bump (measured on the
// traces: a bwd tail of 4 lanes rises from 3.2 to 7.6 GiB, a one-arch peak
// is 4-6.5 GiB), so its peak is left to the processes, or to the compile's end.
bool CurveShowsWave(const TreeSample& tree, uint32_t wave) {
  if (wave == 0 || tree.program != "nvcc") return true;
  const uint32_t archs = std::max(tree.archs, 1u);
  const uint32_t parallel = std::min(std::max(tree.threads, 1u), archs);
  return wave * parallel + parallel <= archs;  // a full wave
}

}  // namespace

uint64_t DefaultHeadroom(uint64_t budget_bytes) {
  // A small budget (gpuctl build allows 256 MiB) keeps three quarters to plan with.
  return std::min(std::clamp<uint64_t>(budget_bytes / 20, uint64_t{1} << 30, uint64_t{8} << 30), budget_bytes / 4);
}

BuildGovernor::BuildGovernor(GovernorConfig config, std::map<std::string, uint64_t> source_peaks,
                             std::map<std::string, double> source_seconds,
                             std::map<std::string, CompileCurve> source_curves)
    : config_(config), source_peaks_(std::move(source_peaks)), source_seconds_(std::move(source_seconds)) {
  if (config_.tick_seconds > 0) {
    step_ticks_ = std::max<uint32_t>(1, static_cast<uint32_t>(std::lround(kCurveStepSeconds / config_.tick_seconds)));
  }
  for (const auto& [key, curve] : source_curves) {
    CurveShape shape = ShapeOf({&curve});
    if (!shape.empty()) source_shapes_[key] = std::move(shape);
  }
}

double BuildGovernor::ExpectedSeconds(const Tracked& tracked) const {
  auto seconds = source_seconds_.find(HistoryKey(tracked.last));
  return seconds == source_seconds_.end() ? -1.0 : seconds->second;
}

std::string BuildGovernor::PeerKey(const TreeSample& tree) {
  return tree.program + "/" + std::to_string(tree.archs) + "/" + std::to_string(tree.threads);
}

std::string FileFamily(const TreeSample& tree) {
  std::string family;
  std::string word;
  bool parameter = false;
  auto end_word = [&] {
    if (!word.empty() && !parameter) family += (family.empty() ? "" : "_") + word;
    word.clear();
    parameter = false;
  };
  const size_t slash = tree.source.rfind('/');
  std::string_view name = std::string_view(tree.source).substr(slash == std::string::npos ? 0 : slash + 1);
  if (const size_t dot = name.rfind('.'); dot != std::string_view::npos && dot > 0) name = name.substr(0, dot);
  for (char c : name) {
    const bool digit = c >= '0' && c <= '9';
    if (digit || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      word += c;
      parameter = parameter || digit;
    } else {
      end_word();
    }
  }
  end_word();
  return family;
}

std::string BuildGovernor::FamilyPeersKey(const TreeSample& tree) {
  std::string family = FileFamily(tree);
  return family.empty() ? family : PeerKey(tree) + "/" + family;
}

std::vector<std::string_view> BuildGovernor::PeerKeys(const Tracked& tracked) {
  std::vector<std::string_view> keys = {tracked.peer_key};
  if (!tracked.family_key.empty()) keys.push_back(tracked.family_key);
  return keys;
}

void BuildGovernor::CountPeak(const Tracked& tracked, uint64_t peak_bytes) {
  for (std::string_view key : PeerKeys(tracked)) {
    PeerPeaks& peers = peers_[std::string(key)];
    peers.max = std::max(peers.max, peak_bytes);
    ++peers.count;
  }
}

std::string HistoryKey(const TreeSample& tree) {
  if (tree.source.empty()) return std::string();
  return tree.source + " (" + tree.program + ", " + std::to_string(tree.archs) + " archs, " +
         std::to_string(tree.threads) + " threads)";
}

uint64_t BuildGovernor::Model(const TreeSample& tree) const {
  return config_.nvcc_peak_one_arch_bytes * WavesOf(tree).parallel;
}

uint64_t BuildGovernor::Predict(const Tracked& tracked) const {
  const TreeSample& tree = tracked.last;
  uint64_t predicted = 0;
  auto history = source_peaks_.find(HistoryKey(tree));
  auto family = peers_.find(tracked.family_key);
  auto peers = peers_.find(tracked.peer_key);
  bool modelled = tree.program == "nvcc";
  uint32_t peers_needed = modelled ? 2 : 1;  // the model is a fair start; one peer may be a light file
  if (history != source_peaks_.end()) {
    predicted = Scale(history->second, kHistoryMargin);
  } else if (family != peers_.end() && family->second.count >= kFamilyPeers) {
    predicted = Scale(family->second.max, kFamilyMargin);
    if (modelled) predicted = std::min(predicted, Model(tree));
  } else if (peers != peers_.end() && peers->second.count >= peers_needed) {
    predicted = Scale(peers->second.max, kPeerMargin);
    if (modelled) predicted = std::min(predicted, Model(tree));
  } else if (modelled) {
    predicted = Model(tree);
  } else {
    predicted = std::max(tracked.peak_rss * 2, config_.unknown_floor_bytes);
  }
  return std::max(predicted, tracked.peak_rss);
}

BuildGovernor::Waves BuildGovernor::WavesOf(const TreeSample& tree) {
  Waves waves;
  if (tree.program == "nvcc") {
    // No arch on its line (nvcc's default, -arch=native): one arch.
    uint32_t archs = std::max(tree.archs, 1u);
    waves.parallel = std::min(std::max(tree.threads, 1u), archs);
    waves.archs = archs;
  }
  return waves;
}

uint32_t BuildGovernor::Waves::count() const { return (archs + parallel - 1) / parallel; }

uint32_t BuildGovernor::Waves::lanes(uint32_t wave) const {
  uint32_t done = wave * parallel;
  return done >= archs ? 0 : std::min(parallel, archs - done);
}

uint64_t BuildGovernor::WavePeak(const Tracked& tracked, uint32_t wave) const {
  Waves waves = WavesOf(tracked.last);
  return Predict(tracked) / waves.parallel * waves.lanes(wave);
}

uint32_t BuildGovernor::Waves::completed(uint32_t device_compiles_done) const {
  uint32_t waves = 0, lanes_done = 0;
  while (waves < count() && lanes_done + lanes(waves) <= device_compiles_done) lanes_done += lanes(waves++);
  return waves;
}

bool BuildGovernor::PastPeaks(const Tracked& tracked) const {
  return tracked.waves_done >= WavesOf(tracked.last).count() && !tracked.in_wave;
}

uint64_t BuildGovernor::Reservation(const Tracked& tracked) const {
  uint64_t rss = tracked.last.rss_bytes;
  if (tracked.in_wave) return std::max(WavePeak(tracked, tracked.waves_done), rss);
  if (tracked.waves_done == 0) return std::max(Predict(tracked), rss);
  // After a wave: its tail (ptxas, the link) stays a while, and the next
  // wave, if any, comes on top of it.
  uint64_t tail = std::max(rss + rss / 4, Scale(tracked.tail_max, 1.1));
  return tail + WavePeak(tracked, tracked.waves_done);
}

void BuildGovernor::Observe(Tracked& tracked, const TreeSample& sample) {
  tracked.last = sample;
  tracked.peak_rss = std::max(tracked.peak_rss, sample.rss_bytes);
  // The curve: a wave's peak has passed once memory rose past 40% of the
  // wave's prediction and fell back to half of what it reached.
  if (!tracked.in_wave) {
    tracked.tail_max = std::max(tracked.tail_max, sample.rss_bytes);
    uint64_t expected = WavePeak(tracked, tracked.curve_waves);
    if (expected > 0 && CurveShowsWave(sample, tracked.curve_waves) && sample.rss_bytes >= Scale(expected, kWaveStart)) {
      tracked.in_wave = true;
      tracked.wave_max = sample.rss_bytes;
    }
  } else {
    tracked.wave_max = std::max(tracked.wave_max, sample.rss_bytes);
    if (sample.rss_bytes <= Scale(tracked.wave_max, kWaveEnd)) {
      tracked.in_wave = false;
      ++tracked.curve_waves;
    }
  }
  uint32_t waves = tracked.curve_waves;
  Waves shape = WavesOf(sample);
  if (sample.device_compiles_done && sample.program == "nvcc") {
    // The processes: a wave is over for sure once its cicc runs ended. The
    // curve may see the wave under way peak first (cicc's front end peaks,
    // then its optimizer runs low), but never more than that one wave.
    uint32_t ended = shape.completed(*sample.device_compiles_done);
    if (ended > tracked.curve_waves) {
      tracked.curve_waves = ended;
      tracked.in_wave = false;
    }
    waves = std::max(ended, std::min(tracked.curve_waves, ended + 1));
  }
  const size_t step = static_cast<size_t>(tracked.progress) / step_ticks_;
  if (tracked.curve.steps.size() <= step) tracked.curve.steps.resize(step + 1, 0);
  tracked.curve.steps[step] = std::max(tracked.curve.steps[step], sample.rss_bytes);
  if (waves > tracked.waves_done) {
    if (tracked.waves_done == 0) {
      tracked.curve.peak_passed_step = static_cast<int32_t>(step);
      // Its first, fullest peak is known now: a peer's, for the others.
      CountPeak(tracked, tracked.peak_rss);
    }
    tracked.waves_done = waves;
    tracked.tail_max = sample.rss_bytes;
  }
}

void BuildGovernor::LearnShapes() {
  std::map<std::string, std::vector<const CompileCurve*>> by_kind;
  for (const auto& [kind, curves] : finished_curves_) {
    for (const CompileCurve& curve : curves) by_kind[kind].push_back(&curve);
  }
  for (const auto& [id, tracked] : trees_) {
    if (tracked.curve.peak_passed_step < 0) continue;
    for (std::string_view peers : PeerKeys(tracked)) by_kind[std::string(peers)].push_back(&tracked.curve);
  }
  peer_shapes_.clear();
  for (const auto& [kind, curves] : by_kind) {
    if (curves.size() >= kShapePeers) peer_shapes_[kind] = ShapeOf(curves);
  }
}

Forecast BuildGovernor::ForecastFor(const Tracked& tracked) const {
  const uint64_t reservation = std::max(Reservation(tracked), tracked.last.rss_bytes);
  const CurveShape* shape = nullptr;
  bool own_curve = false;
  CurveShape family_climb;
  if (auto own = source_shapes_.find(HistoryKey(tracked.last)); own != source_shapes_.end()) {
    shape = &own->second;
    own_curve = true;
  } else if (auto peers = peer_shapes_.find(tracked.peer_key); peers != peer_shapes_.end()) {
    shape = &peers->second;
    // Up to its peak it climbs as its family's files did: one template's
    // files climb and pass alike, while across templates the fastest climb
    // and the latest pass would hold it at its peak the longest (five archs:
    // 550 -> 533 s). Past its peak, the tails of all its peers, which have
    // been seen the furthest (the family's alone: 596 s).
    if (auto family = peer_shapes_.find(tracked.family_key); family != peer_shapes_.end()) {
      family_climb = peers->second;
      family_climb.climb = family->second.climb;
      shape = &family_climb;
    }
  }
  if (shape == nullptr) return {.steps = {}, .beyond = reservation};
  // Past its peak, its own peak is known: its tail scales with it, not with
  // the highest of its peers (a fwd file peaks at 16.7 GiB, a bwd at 26).
  const uint64_t own_peak = FirstPeak(tracked.curve);
  // From its own file's curve: the peak it reached, with no fixed margin;
  // the learned one (margin_) covers a rebuild that runs over its last.
  uint64_t peak = own_peak > 0 ? own_peak : Predict(tracked);
  if (own_curve) {
    const auto history = source_peaks_.find(HistoryKey(tracked.last));
    peak = std::max(history != source_peaks_.end() ? history->second : FirstPeak(tracked.curve), tracked.peak_rss);
  }
  // Past its peak and past what the shape knows: its tail (as Reservation
  // has it), or what it holds now with the next wave's peak on top. Not the
  // tail's high plus the next peak: the next wave's archs start as the
  // first wave's end, so its peak meets their tails at what they hold by
  // then, not at their high (five archs: 653 -> 622 s, 0 OOM).
  // The next wave's peak: its lanes' share of the first wave's, its own
  // once seen (every arch compiles the same file).
  const Waves waves = WavesOf(tracked.last);
  const uint64_t next_wave = own_peak > 0 ? Scale(own_peak / waves.parallel * waves.lanes(tracked.waves_done), kPeerMargin)
                                          : WavePeak(tracked, tracked.waves_done);
  uint64_t fallback = std::max({Scale(tracked.tail_max, 1.1), tracked.last.rss_bytes + tracked.last.rss_bytes / 4,
                                tracked.last.rss_bytes + next_wave});
  if (tracked.curve.peak_passed_step < 0) {
    // Past what the shape knows: its tail at most a margin over the peers'
    // highest, and the next wave's peak if one is left. The first steps
    // after a pass still hold the drop from the peak: not the tail.
    double tail = shape->after.size() <= kDropSteps
                      ? 1.0
                      : *std::max_element(shape->after.begin() + kDropSteps, shape->after.end());
    fallback = Scale(Scale(peak, tail), kTailMargin) + WavePeak(tracked, 1);
  }
  Forecast forecast = ForecastOf(*shape, {.peak_bytes = peak,
                                          .age_steps = static_cast<uint32_t>(tracked.progress) / step_ticks_,
                                          .passed_step = tracked.curve.peak_passed_step,
                                          .fallback_bytes = fallback,
                                          .rss_bytes = tracked.last.rss_bytes});
  if (forecast.steps.empty()) forecast.steps.push_back(forecast.beyond);
  forecast.steps[0] = std::max(forecast.steps[0], tracked.last.rss_bytes);
  return forecast;
}

void BuildGovernor::Forget(const std::vector<TreeSample>& trees) {
  std::set<std::string> present;
  for (const TreeSample& tree : trees) present.insert(tree.id);
  for (auto it = trees_.begin(); it != trees_.end();) {
    if (present.count(it->first) != 0) {
      ++it;
      continue;
    }
    const Tracked& ended = it->second;
    if (ended.curve.peak_passed_step < 0) {
      CountPeak(ended, ended.peak_rss);
    } else {
      // Counted at its pass; a later wave may have gone higher.
      for (std::string_view key : PeerKeys(ended)) {
        PeerPeaks& peers = peers_[std::string(key)];
        peers.max = std::max(peers.max, ended.peak_rss);
      }
    }
    std::string key = HistoryKey(ended.last);
    if (!key.empty()) source_peaks_[key] = std::max(source_peaks_[key], ended.peak_rss);
    const double seconds = static_cast<double>(ended.run_ticks) * config_.tick_seconds;
    if (!key.empty()) source_seconds_[key] = seconds;
    CompileCurve curve = ended.curve;
    curve.ended = true;
    if (curve.peak_passed_step >= 0) {
      for (std::string_view peers : PeerKeys(ended)) finished_curves_[std::string(peers)].push_back(curve);
    }
    finished_.push_back({ended.last.program, key, ended.peak_rss, seconds, curve});
    it = trees_.erase(it);
  }
}

void BuildGovernor::LearnMargin() {
  double worst = 1.0;
  for (auto& [id, tracked] : trees_) {
    // Small compiles are noise: a few hundred MiB over is no lesson.
    if (tracked.forecast_now >= kMarginFloorBytes) {
      worst = std::max(worst, static_cast<double>(tracked.last.rss_bytes) / static_cast<double>(tracked.forecast_now));
    }
    tracked.forecast_now = 0;
  }
  margin_ = std::min(kMaxMargin, std::max(worst, 1.0 + (margin_ - 1.0) * kMarginDecay));
}

void BuildGovernor::Progress(const std::vector<TreeSample>& trees) {
  uint32_t busy = 0;
  for (const TreeSample& sample : trees) {
    auto it = trees_.find(sample.id);
    if (it != trees_.end() && !it->second.paused) busy += sample.busy;
  }
  const double speed = config_.cores > 0 && busy > config_.cores ? static_cast<double>(config_.cores) / busy : 1.0;
  for (const TreeSample& sample : trees) {
    auto it = trees_.find(sample.id);
    if (it != trees_.end() && !it->second.paused) it->second.progress += speed;
  }
}

GovernorDecision BuildGovernor::Tick(const std::vector<TreeSample>& trees, uint64_t other_bytes) {
  Forget(trees);
  Progress(trees);
  std::vector<Tracked*> order;
  uint64_t held = 0;
  for (const TreeSample& sample : trees) {
    auto [it, fresh] = trees_.try_emplace(sample.id);
    Tracked& tracked = it->second;
    if (fresh) {
      tracked.age = next_age_++;
      // A tree's program, archs, threads and source stay what they were.
      tracked.peer_key = PeerKey(sample);
      tracked.family_key = FamilyPeersKey(sample);
      tracked.paused = sample.stopped;
    } else if (sample.stopped && !tracked.paused) {
      // Paused from outside while admitted (the guard's relief, through the
      // watch): paused now, resumed as it fits.
      tracked.paused = true;
    }
    Observe(tracked, sample);
    held += sample.rss_bytes;
    order.push_back(&tracked);
  }
  // Tails first (they finish and give memory back), then the running (their
  // forecasts were admitted; a compile paused mid-climb holds what it has
  // and waits: on a rebuild with five archs, a long compile not yet started
  // put first paused 25 running ones at 250 s, 586 s in all), then the longest
  // expected: a long compile started last sets the build's end (measured on
  // the incident host, one arch: 158 -> 137 s on a rebuild), then the oldest.
  std::stable_sort(order.begin(), order.end(), [&](const Tracked* a, const Tracked* b) {
    bool a_tail = !a->paused && PastPeaks(*a), b_tail = !b->paused && PastPeaks(*b);
    if (a_tail != b_tail) return a_tail;
    bool a_runs = !a->paused && a->run_ticks > 0, b_runs = !b->paused && b->run_ticks > 0;
    if (a_runs != b_runs) return a_runs;
    double a_s = ExpectedSeconds(*a), b_s = ExpectedSeconds(*b);
    if ((a_s < 0) != (b_s < 0)) return a_s < 0;
    if (a_s != b_s) return a_s > b_s;
    return a->age < b->age;
  });

  LearnShapes();
  LearnMargin();
  const uint64_t limit = Less(Less(config_.budget_bytes, config_.headroom_bytes), other_bytes);
  GovernorDecision decision;
  // The plan, step by step from now: what every tree holds now, and for the
  // admitted, what their forecasts say instead. A tree is admitted when its
  // forecast, started where it is, fits beside the plan at every step.
  std::vector<uint64_t> plan;
  uint64_t plan_beyond = held;
  auto planned_at = [&](size_t step) { return step < plan.size() ? plan[step] : plan_beyond; };
  const Tracked* first = nullptr;
  for (Tracked* tracked : order) {
    Forecast forecast = ForecastFor(*tracked);
    const uint64_t rss = tracked->last.rss_bytes;  // already in the plan
    if (!forecast.steps.empty()) {
      tracked->forecast_now = forecast.steps[0];
      for (uint64_t& bytes : forecast.steps) bytes = Scale(bytes, margin_);
      forecast.beyond = Scale(forecast.beyond, margin_);
    }
    const size_t steps = std::max(plan.size(), forecast.steps.size());
    // A compile already running is paused only for what comes soon: paused,
    // it still holds its memory, and a conflict further off may never come
    // (a forecast past what peers have shown is a guess). Pausing tails for
    // their fallbacks 30-60 s ahead held five archs to 20 compiles.
    const bool started = !tracked->paused && tracked->run_ticks > 0;
    // One not yet running must fit through its peak; past it, its tail is
    // small and what it meets there is the fallback of forecasts past what
    // peers have shown (a guess): a conflict that does come is met by
    // pausing a younger compile early in its climb.
    const bool shaped = !forecast.steps.empty();
    size_t checked = started ? kNearSteps : steps;  // past the plan's steps, At() is what lasts
    if (!started && shaped) checked = std::min(steps, forecast.peak_ends + kDropSteps);
    bool fits = started || shaped || plan_beyond + forecast.beyond - rss <= limit;
    for (size_t step = 0; fits && step < checked; ++step) fits = planned_at(step) + forecast.At(step) - rss <= limit;
    bool admit = first == nullptr || fits;
    if (admit) {
      if (first == nullptr) first = tracked;
      plan.resize(steps, plan_beyond);
      for (size_t step = 0; step < steps; ++step) plan[step] = plan[step] + forecast.At(step) - rss;
      plan_beyond = plan_beyond + forecast.beyond - rss;
      ++decision.running;
      if (tracked->paused) decision.resume.push_back(tracked->last.id);
      tracked->paused = false;
      ++tracked->run_ticks;
    } else {
      ++decision.paused;
      if (!tracked->paused) {
        decision.pause.push_back(tracked->last.id);
        ++pauses_;
      }
      tracked->paused = true;
    }
  }
  decision.planned_bytes = plan_beyond;
  for (uint64_t bytes : plan) decision.planned_bytes = std::max(decision.planned_bytes, bytes);

  if (first != nullptr && decision.running == 1) {
    const TreeSample& lone = first->last;
    auto history = source_peaks_.find(HistoryKey(lone));
    bool at_limit = !PastPeaks(*first) && held + other_bytes >= Less(config_.budget_bytes, config_.headroom_bytes / 2);
    bool never_fits = history != source_peaks_.end() && history->second + other_bytes > config_.budget_bytes;
    if (at_limit || never_fits) {
      std::string what = lone.source.empty() ? lone.program : lone.program + " " + lone.source;
      std::string why = never_fits ? "needed " + FormatBytes(history->second) + " in an earlier build"
                                   : "has reached " + FormatBytes(lone.rss_bytes);
      decision.fail = "the compile " + what + " cannot fit: it " + why + ", alone, with " +
                      std::to_string(decision.paused) + " paused compiles holding " +
                      FormatBytes(held - lone.rss_bytes) + " and " + FormatBytes(other_bytes) +
                      " outside compiles; the budget is " + FormatBytes(config_.budget_bytes) +
                      ". Raise --mem-budget, free memory, or build fewer archs at once";
    }
  }
  return decision;
}

uint64_t BuildGovernor::PredictedPeak(const std::string& id) const {
  auto it = trees_.find(id);
  return it == trees_.end() ? 0 : Predict(it->second);
}

std::vector<FinishedCompile> BuildGovernor::TakeFinished() {
  std::vector<FinishedCompile> out;
  out.swap(finished_);
  return out;
}

}  // namespace gpuctl::build
