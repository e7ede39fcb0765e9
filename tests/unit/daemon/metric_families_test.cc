// /metrics' families from snapshots: names and units, per-GPU and per-job
// labels, text from outside sanitised, ended jobs dropping out, and the
// guard's counters from its events, all as Prometheus' text format shows them.
#include "daemon/metrics/metric_families.h"

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include "daemon/metrics/guard_metrics.h"

namespace gpuctl::daemon {
namespace {

constexpr int64_t kNow = 1'750'000'000'000;

std::string Text(const std::vector<prometheus::MetricFamily>& families) {
  return prometheus::TextSerializer().Serialize(families);
}

bool Has(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

v1::HealthSnapshot Host() {
  v1::HealthSnapshot s;
  v1::HostHealth* h = s.mutable_host();
  h->set_mem_total_bytes(288ull << 30);
  h->set_mem_available_bytes(100ull << 30);
  h->set_swap_total_bytes(8ull << 30);
  h->set_swap_free_bytes(2ull << 30);
  h->mutable_memory_pressure()->mutable_some()->set_avg10(12.5);
  h->mutable_memory_pressure()->mutable_some()->set_total_us(2'500'000);
  h->mutable_memory_pressure()->mutable_full()->set_avg60(1.0);
  v1::Gpu* g = s.add_gpus();
  g->set_index(3);
  g->set_uuid("GPU-c6489789-7836-64bc-561f-33b9f6b86ea3");
  g->set_name("NVIDIA \"H200\"\xff");  // a quote and a byte that is not UTF-8
  g->set_memory_total_bytes(150'754'820'096);
  g->set_memory_used_bytes(644'874'240);
  g->set_utilization_gpu_pct(87);
  g->set_temperature_c(41);
  g->set_power_draw_w(81.94);
  g->set_ecc_uncorrected(2);
  return s;
}

v1::Job Job(const std::string& name, v1::JobState state, int64_t ended_unix_ms) {
  v1::Job job;
  job.mutable_spec()->set_name(name);
  job.set_state(state);
  job.set_started_unix_ms(kNow - 3'600'000);
  job.set_ended_unix_ms(ended_unix_ms);
  return job;
}

TEST(MetricFamilies, HostAndGpusInBaseUnitsWithTheUuid) {
  v1::HealthSnapshot health = Host();
  std::string text = Text(BuildMetricFamilies({.health = &health, .jobs = nullptr, .self = {}, .now_unix_ms = kNow}));
  EXPECT_TRUE(Has(text, "gpuctl_host_memory_total_bytes 309237645312")) << text;
  EXPECT_TRUE(Has(text, "gpuctl_host_swap_free_bytes 2147483648")) << text;
  EXPECT_TRUE(Has(text, "gpuctl_host_memory_pressure_ratio{kind=\"some\",window=\"10s\"} 0.125")) << text;
  EXPECT_TRUE(Has(text, "gpuctl_host_memory_pressure_ratio{kind=\"full\",window=\"60s\"} 0.01")) << text;
  EXPECT_TRUE(Has(text, "gpuctl_host_memory_pressure_stall_seconds_total{kind=\"some\"} 2.5")) << text;
  EXPECT_NE(text.find("# TYPE gpuctl_host_memory_pressure_stall_seconds_total counter"), std::string::npos);
  const std::string id = "{gpu=\"3\",uuid=\"GPU-c6489789-7836-64bc-561f-33b9f6b86ea3\"}";
  EXPECT_TRUE(Has(text, "gpuctl_gpu_utilization_ratio" + id + " 0.87")) << text;
  EXPECT_TRUE(Has(text, "gpuctl_gpu_memory_used_bytes" + id + " 644874240")) << text;
  EXPECT_TRUE(Has(text, "gpuctl_gpu_temperature_celsius" + id + " 41")) << text;
  EXPECT_TRUE(Has(text, "gpuctl_gpu_power_watts" + id + " 81.94")) << text;
  EXPECT_TRUE(Has(text, "gpuctl_gpu_ecc_uncorrected_errors_total" + id + " 2")) << text;
  // The name is escaped by the format and made valid UTF-8 here.
  EXPECT_NE(text.find("name=\"NVIDIA \\\"H200\\\"\xef\xbf\xbd\""), std::string::npos) << text;
  // No power limit was read: no series rather than a made-up 0.
  EXPECT_EQ(text.find("gpuctl_gpu_power_limit_watts"), std::string::npos);
}

TEST(MetricFamilies, JobsWithTheirFiguresAndEndedOnesDropOutAfterTenMinutes) {
  v1::ListJobsResponse jobs;
  v1::Job running = Job("dflash", v1::JOB_STATE_RUNNING, 0);
  running.mutable_metrics()->set_step(1200);
  running.mutable_metrics()->set_loss(0.4213);
  running.mutable_metrics()->mutable_throughput()->set_value(5123);
  running.mutable_metrics()->mutable_throughput()->set_unit("tok/s");
  running.set_restart_count(1);
  running.add_attempts();
  running.add_events()->set_kind("cuda_oom");
  running.add_events()->set_kind("traceback");
  running.add_events()->set_kind("cuda_oom");
  v1::JobGpuMemory* gpu = running.add_gpu_memory();
  gpu->set_index(0);
  gpu->set_used_bytes(20ull << 30);
  *jobs.add_jobs() = running;
  *jobs.add_jobs() = Job("recent", v1::JOB_STATE_KILLED_BY_GUARD, kNow - 9 * 60'000);
  *jobs.add_jobs() = Job("old", v1::JOB_STATE_SUCCEEDED, kNow - 11 * 60'000);
  std::string text = Text(BuildMetricFamilies({.health = nullptr, .jobs = &jobs, .self = {}, .now_unix_ms = kNow}));
  EXPECT_TRUE(Has(text, "gpuctl_job_info{job=\"dflash\",kind=\"train\",state=\"running\"} 1")) << text;
  EXPECT_TRUE(Has(text, "gpuctl_job_running{job=\"dflash\"} 1")) << text;
  EXPECT_TRUE(Has(text, "gpuctl_job_step{job=\"dflash\"} 1200")) << text;
  EXPECT_TRUE(Has(text, "gpuctl_job_loss{job=\"dflash\"} 0.4213")) << text;
  EXPECT_TRUE(Has(text, "gpuctl_job_throughput{job=\"dflash\",unit=\"tok/s\"} 5123")) << text;
  EXPECT_TRUE(Has(text, "gpuctl_job_gpu_memory_used_bytes{job=\"dflash\",gpu=\"0\"} 21474836480")) << text;
  EXPECT_TRUE(Has(text, "gpuctl_job_cuda_oom_total{job=\"dflash\"} 2")) << text;
  EXPECT_TRUE(Has(text, "gpuctl_job_restarts_total{job=\"dflash\"} 1")) << text;
  EXPECT_TRUE(Has(text, "gpuctl_job_attempts{job=\"dflash\"} 2")) << text;
  EXPECT_TRUE(Has(text, "gpuctl_job_info{job=\"recent\",kind=\"train\",state=\"killed_by_guard\"} 1")) << text;
  EXPECT_TRUE(Has(text, "gpuctl_job_running{job=\"recent\"} 0")) << text;
  EXPECT_EQ(text.find("job=\"old\""), std::string::npos) << "ended 11 min ago: dropped\n" << text;
  EXPECT_TRUE(Has(text, "gpuctl_jobs 2")) << text;
  EXPECT_TRUE(Has(text, "gpuctl_health_up 0")) << text;
}

TEST(MetricFamilies, AHungJobReadsOneUntilItEndsAndTheTimeSinceItsLastProgress) {
  v1::ListJobsResponse jobs;
  v1::Job hung = Job("hung", v1::JOB_STATE_RUNNING, 0);
  hung.mutable_progress()->set_last_progress_unix_ms(kNow - 1'800'500);
  hung.mutable_progress()->set_hung_since_unix_ms(kNow - 600'000);
  hung.mutable_spec()->set_attempt(3);
  hung.add_attempts();  // the spec's attempt wins over the lineage kept
  *jobs.add_jobs() = hung;
  v1::Job busy = Job("busy", v1::JOB_STATE_STARTING, 0);
  busy.mutable_progress()->set_last_progress_unix_ms(kNow - 2'000);
  *jobs.add_jobs() = busy;
  // Hung when it was stopped: its run is over, so no longer hung.
  v1::Job stopped = Job("stopped", v1::JOB_STATE_STOPPED, kNow - 60'000);
  stopped.mutable_progress()->set_last_progress_unix_ms(kNow - 900'000);
  stopped.mutable_progress()->set_hung_since_unix_ms(kNow - 120'000);
  *jobs.add_jobs() = stopped;
  *jobs.add_jobs() = Job("fresh", v1::JOB_STATE_RUNNING, 0);  // no progress recorded yet
  std::string text = Text(BuildMetricFamilies({.health = nullptr, .jobs = &jobs, .self = {}, .now_unix_ms = kNow}));
  EXPECT_TRUE(Has(text, "gpuctl_job_hung{job=\"hung\"} 1")) << text;
  EXPECT_TRUE(Has(text, "gpuctl_job_hung{job=\"busy\"} 0")) << text;
  EXPECT_TRUE(Has(text, "gpuctl_job_hung{job=\"stopped\"} 0")) << text;
  EXPECT_TRUE(Has(text, "gpuctl_job_hung{job=\"fresh\"} 0")) << text;
  EXPECT_NE(text.find("# TYPE gpuctl_job_hung gauge"), std::string::npos) << text;
  EXPECT_TRUE(Has(text, "gpuctl_job_seconds_since_progress{job=\"hung\"} 1800.5")) << text;
  EXPECT_TRUE(Has(text, "gpuctl_job_seconds_since_progress{job=\"busy\"} 2")) << text;
  EXPECT_EQ(text.find("gpuctl_job_seconds_since_progress{job=\"stopped\"}"), std::string::npos) << text;
  EXPECT_EQ(text.find("gpuctl_job_seconds_since_progress{job=\"fresh\"}"), std::string::npos) << text;
  EXPECT_TRUE(Has(text, "gpuctl_job_attempts{job=\"hung\"} 3")) << text;
  EXPECT_TRUE(Has(text, "gpuctl_job_attempts{job=\"busy\"} 1")) << text;
}

TEST(MetricFamilies, ADrainedGpuReadsZeroHealthy) {
  v1::HealthSnapshot health = Host();
  v1::Gpu* drained = health.add_gpus();
  drained->set_index(5);
  drained->set_uuid("GPU-00000000-0000-0000-0000-000000000005");
  drained->set_drained(true);
  drained->mutable_fault()->set_xid(79);
  drained->mutable_fault()->set_reason("Xid 79: GPU has fallen off the bus");
  std::string text = Text(BuildMetricFamilies({.health = &health, .jobs = nullptr, .self = {}, .now_unix_ms = kNow}));
  EXPECT_TRUE(Has(text, "gpuctl_gpu_healthy{gpu=\"3\",uuid=\"GPU-c6489789-7836-64bc-561f-33b9f6b86ea3\"} 1")) << text;
  EXPECT_TRUE(Has(text, "gpuctl_gpu_healthy{gpu=\"5\",uuid=\"GPU-00000000-0000-0000-0000-000000000005\"} 0")) << text;
  EXPECT_NE(text.find("# TYPE gpuctl_gpu_healthy gauge"), std::string::npos) << text;
  EXPECT_TRUE(Has(text, "gpuctl_gpus 2")) << text;
}

TEST(MetricFamilies, TheAgentItself) {
  std::string text = Text(BuildMetricFamilies(
      {.health = nullptr, .jobs = nullptr, .self = {.resident_bytes = 15'000'000, .threads = 22}, .now_unix_ms = kNow}));
  EXPECT_TRUE(Has(text, "gpuctl_agent_resident_memory_bytes 15000000")) << text;
  EXPECT_TRUE(Has(text, "gpuctl_agent_threads 22")) << text;
  EXPECT_TRUE(Has(text, std::string("gpuctl_agent_info{version=\"") + GPUCTL_VERSION + "\"} 1")) << text;
}

TEST(GuardMetrics, CountsKillsWarningsAndTheReactionTime) {
  GuardMetrics guard;
  guard.Observe("guard_warning", {});
  guard.Observe("guard_kill", {{"reaction_ms", 3.2}});
  guard.Observe("guard_kill", {{"reaction_ms", 40.0}});
  guard.Observe("guard_kill", {{"reaction_ms", "not a number"}});
  guard.Observe("guard_no_victim", {});
  guard.Observe("job_started", {});
  std::string text = Text(guard.registry()->Collect());
  EXPECT_TRUE(Has(text, "gpuctl_guard_kills_total 3")) << text;
  EXPECT_TRUE(Has(text, "gpuctl_guard_warnings_total 1")) << text;
  EXPECT_TRUE(Has(text, "gpuctl_guard_no_victim_total 1")) << text;
  EXPECT_TRUE(Has(text, "gpuctl_guard_reaction_seconds_count 2")) << text;
  EXPECT_TRUE(Has(text, "gpuctl_guard_reaction_seconds_bucket{le=\"0.005\"} 1")) << text;
  EXPECT_TRUE(Has(text, "gpuctl_guard_reaction_seconds_bucket{le=\"0.05\"} 2")) << text;
}

TEST(JobStateWord, TheWordsOfTheJsonContract) {
  EXPECT_EQ(JobStateWord(v1::JOB_STATE_RUNNING), "running");
  EXPECT_EQ(JobStateWord(v1::JOB_STATE_KILLED_BY_GUARD), "killed_by_guard");
  EXPECT_EQ(JobStateWord(v1::JOB_STATE_QUEUED), "queued");
}

}  // namespace
}  // namespace gpuctl::daemon
