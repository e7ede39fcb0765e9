// The static MAX_JOBS estimate's model against what real nvcc jobs used
// (../shared/fixtures/gpu-host/nvcc-memtrace-*.csv, see its README), and the
// incident that started gpuctl: flash-attn's default build on a 288 GB,
// 128-core host with MAX_JOBS set from the core count.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "agents/guard/guard_config.h"
#include "agents/provision/max_jobs_estimate.h"
#include "agents/provision/nvcc_memtrace.h"
#include "tests/fakes/temp_dir.h"
#include "common/units.h"

namespace gpuctl::provision {
namespace {


struct ObservedJob {
  std::string job;
  uint32_t archs;
  uint32_t threads;
  uint64_t peak_bytes;
};

// The 1-arch trace ran every job with --threads 4. The 2-arch trace ran some
// jobs with --threads 2 and some with --threads 1; its job names end in _tN.
uint32_t ThreadsOf(const std::string& job, uint32_t default_threads) {
  size_t t = job.rfind("_t");
  if (t == std::string::npos || t + 2 >= job.size()) return default_threads;
  std::string digits = job.substr(t + 2);
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) return default_threads;
  return static_cast<uint32_t>(std::stoul(digits));
}

std::vector<ObservedJob> ReadTrace(const char* name, uint32_t archs, uint32_t default_threads) {
  auto rows = ParseNvccMemtrace(testing::ReadFixture(name));
  EXPECT_TRUE(rows.ok()) << rows.status().ToString();
  std::vector<ObservedJob> jobs;
  if (!rows.ok()) return jobs;
  for (const auto& [job, peak_mib] : PeakRssMibByJob(*rows)) {
    jobs.push_back({job, archs, ThreadsOf(job, default_threads), peak_mib * kMiB});
  }
  return jobs;
}

std::vector<ObservedJob> AllObservedJobs() {
  std::vector<ObservedJob> jobs = ReadTrace("nvcc-memtrace-1arch-t4.csv", 1, 4);
  std::vector<ObservedJob> two = ReadTrace("nvcc-memtrace-2arch.csv", 2, 0);
  jobs.insert(jobs.end(), two.begin(), two.end());
  return jobs;
}

TEST(MaxJobsEstimateTraces, EveryConfigurationOfTheTracesIsPresent) {
  std::vector<ObservedJob> jobs = AllObservedJobs();
  auto count = [&](uint32_t archs, uint32_t threads) {
    return std::count_if(jobs.begin(), jobs.end(),
                         [&](const ObservedJob& j) { return j.archs == archs && j.threads == threads; });
  };
  EXPECT_EQ(count(1, 4), 5);
  EXPECT_EQ(count(2, 2), 3);
  EXPECT_EQ(count(2, 1), 2);
  EXPECT_EQ(jobs.size(), 10u);
}

TEST(MaxJobsEstimateTraces, PredictionCoversEveryObservedJobWithoutOverreaching) {
  for (const ObservedJob& job : AllObservedJobs()) {
    uint64_t predicted = PredictedJobBytes(kNvccPeakOneArchBytes, job.threads, job.archs);
    EXPECT_GE(predicted, job.peak_bytes) << job.job << " (" << job.archs << " archs, --threads " << job.threads
                                         << ") peaked at " << job.peak_bytes / kMiB << " MiB";
    EXPECT_LE(predicted, 2 * job.peak_bytes) << job.job << ": the model predicts more than twice what it used";
  }
}

TEST(MaxJobsEstimateTraces, TheConstantIsTheWorstObservedPerArchPeakRoundedUpALittle) {
  // Calibration: each job's peak over the threads it had in flight.
  uint64_t worst_per_arch = 0;
  for (const ObservedJob& job : AllObservedJobs()) {
    worst_per_arch = std::max<uint64_t>(worst_per_arch, job.peak_bytes / std::min(job.threads, job.archs));
  }
  EXPECT_GE(kNvccPeakOneArchBytes, worst_per_arch);
  EXPECT_LE(kNvccPeakOneArchBytes, worst_per_arch + worst_per_arch / 10) << "rounded up by more than 10%";
}

TEST(MaxJobsEstimateTraces, IncidentHostGetsAMaxJobsThatFits) {
  const uint64_t total = 288'000'000'000;           // the incident's 288 GB host
  const uint64_t available = total - (8ull << 30);  // an idle host: a few GiB in use
  const uint64_t reserve = guard::DefaultReserveBytes(total);
  MaxJobsInput input{.archs = kFlashAttnDefaultArchs, .nvcc_threads = 4, .available_bytes = available,
                           .reserve_bytes = reserve, .cpus = 128};
  auto budget = EstimateMaxJobs(input);
  ASSERT_TRUE(budget.ok()) << budget.status().ToString();
  const uint64_t per_job = PredictedJobBytes(kNvccPeakOneArchBytes, 4, 5);
  EXPECT_TRUE(budget->fits);
  EXPECT_GE(budget->max_jobs, 1u);
  EXPECT_LE(budget->max_jobs * per_job, available - reserve) << budget->explanation;
  EXPECT_GT((budget->max_jobs + 1) * per_job, available - reserve) << "one more job would still fit";
  for (uint64_t what_was_tried : {128u, 64u, 32u}) {
    EXPECT_GT(what_was_tried * per_job, available - reserve) << "MAX_JOBS=" << what_was_tried << " would fit";
    EXPECT_LT(budget->max_jobs, what_was_tried);
  }
  EXPECT_NE(budget->explanation.find("MAX_JOBS=" + std::to_string(budget->max_jobs)), std::string::npos);

  // Building only the H200's arch lets several times more jobs run at once.
  input.archs = {"90"};
  auto one_arch = EstimateMaxJobs(input);
  ASSERT_TRUE(one_arch.ok());
  EXPECT_GE(one_arch->max_jobs, 3 * budget->max_jobs) << one_arch->explanation;
}

}  // namespace
}  // namespace gpuctl::provision
