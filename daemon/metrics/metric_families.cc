#include "daemon/metrics/metric_families.h"

#include <algorithm>
#include <cctype>

#include "common/event_kinds.h"
#include "common/utf8.h"

namespace gpuctl::daemon {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;
using Labels = std::vector<ClientMetric::Label>;

class Families {
 public:
  // A family, made on first use; families with no samples are dropped.
  MetricFamily& Get(const std::string& name, const std::string& help, MetricType type) {
    for (MetricFamily& f : list_) {
      if (f.name == name) return f;
    }
    list_.push_back({name, help, type, {}});
    return list_.back();
  }
  void Gauge(const std::string& name, const std::string& help, Labels labels, double value) {
    ClientMetric m;
    m.label = std::move(labels);
    m.gauge.value = value;
    Get(name, help, MetricType::Gauge).metric.push_back(std::move(m));
  }
  void Counter(const std::string& name, const std::string& help, Labels labels, double value) {
    ClientMetric m;
    m.label = std::move(labels);
    m.counter.value = value;
    Get(name, help, MetricType::Counter).metric.push_back(std::move(m));
  }
  std::vector<MetricFamily> Take() { return std::move(list_); }

 private:
  std::vector<MetricFamily> list_;
};

// Label values are text from outside (GPU names from the driver).
ClientMetric::Label L(std::string name, const std::string& value) { return {std::move(name), SanitizeUtf8(value)}; }

void AddHost(Families& f, const v1::HostHealth& h) {
  f.Gauge("gpuctl_host_memory_total_bytes", "Host memory (MemTotal).", {}, static_cast<double>(h.mem_total_bytes()));
  f.Gauge("gpuctl_host_memory_available_bytes", "Host memory available (MemAvailable).", {},
          static_cast<double>(h.mem_available_bytes()));
  f.Gauge("gpuctl_host_swap_total_bytes", "Swap configured.", {}, static_cast<double>(h.swap_total_bytes()));
  f.Gauge("gpuctl_host_swap_free_bytes", "Swap free.", {}, static_cast<double>(h.swap_free_bytes()));
  f.Gauge("gpuctl_host_load1", "1-minute load average.", {}, h.load1());
  if (!h.has_memory_pressure()) return;
  const char* kWhat = "Share of time tasks stalled on memory (PSI), over the window.";
  const char* kTotal = "Time tasks stalled on memory (PSI), cumulative.";
  auto line = [&](const char* kind, const v1::PressureLine& p) {
    f.Gauge("gpuctl_host_memory_pressure_ratio", kWhat, {L("kind", kind), L("window", "10s")}, p.avg10() / 100);
    f.Gauge("gpuctl_host_memory_pressure_ratio", kWhat, {L("kind", kind), L("window", "60s")}, p.avg60() / 100);
    f.Gauge("gpuctl_host_memory_pressure_ratio", kWhat, {L("kind", kind), L("window", "300s")}, p.avg300() / 100);
    f.Counter("gpuctl_host_memory_pressure_stall_seconds_total", kTotal, {L("kind", kind)},
              static_cast<double>(p.total_us()) / 1e6);
  };
  line("some", h.memory_pressure().some());
  if (h.memory_pressure().has_full()) line("full", h.memory_pressure().full());
}

void AddGpus(Families& f, const v1::HealthSnapshot& s) {
  for (const v1::Gpu& g : s.gpus()) {
    Labels id = {L("gpu", std::to_string(g.index())), L("uuid", g.uuid())};
    Labels info = id;
    info.push_back(L("name", g.name()));
    info.push_back(L("compute_capability", g.compute_capability()));
    f.Gauge("gpuctl_gpu_info", "A GPU the agent sees (value 1), with its name.", info, 1);
    if (g.has_utilization_gpu_pct()) {
      f.Gauge("gpuctl_gpu_utilization_ratio", "GPU busy share over the driver's last sample period.", id,
              g.utilization_gpu_pct() / 100.0);
    }
    if (g.has_memory_used_bytes()) {
      f.Gauge("gpuctl_gpu_memory_used_bytes", "GPU memory in use.", id, static_cast<double>(g.memory_used_bytes()));
    }
    if (g.has_memory_total_bytes()) {
      f.Gauge("gpuctl_gpu_memory_total_bytes", "GPU memory.", id, static_cast<double>(g.memory_total_bytes()));
    }
    if (g.has_temperature_c()) f.Gauge("gpuctl_gpu_temperature_celsius", "GPU temperature.", id, g.temperature_c());
    if (g.has_power_draw_w()) f.Gauge("gpuctl_gpu_power_watts", "GPU power draw.", id, g.power_draw_w());
    if (g.has_power_limit_w()) f.Gauge("gpuctl_gpu_power_limit_watts", "GPU power limit.", id, g.power_limit_w());
    // Drained: after a critical fault (an Xid, double-bit ECC, the GPU lost)
    // or by `gpuctl gpu drain`; the queue places nothing on it until undrained.
    f.Gauge("gpuctl_gpu_healthy", "1 unless the GPU is drained (a critical fault or gpuctl gpu drain), then 0.", id,
            g.drained() ? 0 : 1);
    if (g.has_ecc_uncorrected()) {
      f.Counter("gpuctl_gpu_ecc_uncorrected_errors_total", "Volatile uncorrected ECC errors (since the driver loaded).",
                id, static_cast<double>(g.ecc_uncorrected()));
    }
  }
  f.Gauge("gpuctl_gpus", "GPUs the agent sees.", {}, s.gpus_size());
}

bool Kept(const v1::Job& job, int64_t now_unix_ms) {
  if (job.ended_unix_ms() <= 0) return true;
  return now_unix_ms - job.ended_unix_ms() < std::chrono::milliseconds(kEndedJobRetention).count();
}

void AddJob(Families& f, const v1::Job& job, int64_t now_unix_ms) {
  const std::string& name = job.spec().name();
  std::string kind = job.spec().kind().empty() ? "train" : job.spec().kind();
  Labels id = {L("job", name)};
  const bool active = job.state() == v1::JOB_STATE_RUNNING || job.state() == v1::JOB_STATE_STARTING;
  f.Gauge("gpuctl_job_info", "A job the agent keeps (value 1), with its kind and state.",
          {L("job", name), L("kind", kind), L("state", JobStateWord(job.state()))}, 1);
  f.Gauge("gpuctl_job_running", "1 while the job runs (starting or running), else 0.", id, active ? 1 : 0);
  // Hang detection (agents/train/hang_watch): a run that ended is no longer hung.
  const v1::JobProgress& progress = job.progress();
  f.Gauge("gpuctl_job_hung", "1 while the job's run makes no progress past its budget (hung), else 0.", id,
          active && progress.hung_since_unix_ms() > 0 ? 1 : 0);
  if (active && progress.last_progress_unix_ms() > 0) {
    f.Gauge("gpuctl_job_seconds_since_progress", "Time since the running job last made progress (a step, output...).",
            id, static_cast<double>(std::max<int64_t>(0, now_unix_ms - progress.last_progress_unix_ms())) / 1000.0);
  }
  const v1::JobMetrics& m = job.metrics();
  if (m.has_step()) f.Gauge("gpuctl_job_step", "The last training step the job's log showed.", id, static_cast<double>(m.step()));
  if (m.has_loss()) f.Gauge("gpuctl_job_loss", "The last loss the job's log showed.", id, m.loss());
  if (m.has_throughput()) {
    f.Gauge("gpuctl_job_throughput", "The last throughput the job's log showed, in its own unit.",
            {L("job", name), L("unit", m.throughput().unit())}, m.throughput().value());
  }
  for (const v1::JobGpuMemory& gpu : job.gpu_memory()) {
    f.Gauge("gpuctl_job_gpu_memory_used_bytes", "GPU memory the job's processes use, per GPU.",
            {L("job", name), L("gpu", std::to_string(gpu.index()))}, static_cast<double>(gpu.used_bytes()));
  }
  auto ooms = std::count_if(job.events().begin(), job.events().end(), [](const v1::JobEvent& e) {
    return e.kind() == event_kind::kCudaOom;
  });
  f.Counter("gpuctl_job_cuda_oom_total", "CUDA out-of-memory errors in the job's log (this attempt).", id,
            static_cast<double>(ooms));
  f.Counter("gpuctl_job_restarts_total", "Times the agent relaunched the job.", id, job.restart_count());
  // spec.attempt, the number `gpuctl train status` shows (1, then 2... per
  // relaunch); a record from before it was kept counts its earlier attempts.
  const double attempt = job.spec().attempt() > 0 ? static_cast<double>(job.spec().attempt())
                                                  : static_cast<double>(job.attempts_size()) + 1;
  f.Gauge("gpuctl_job_attempts", "The job's attempt, 1 then 2... for each relaunch (OOM or from a checkpoint).", id,
          attempt);
  if (job.started_unix_ms() > 0) {
    f.Gauge("gpuctl_job_start_time_seconds", "When the job started (Unix time).", id, static_cast<double>(job.started_unix_ms()) / 1000.0);
  }
}

}  // namespace

std::string JobStateWord(v1::JobState state) {
  std::string name = v1::JobState_Name(state);
  const std::string prefix = "JOB_STATE_";
  if (name.rfind(prefix, 0) == 0) name = name.substr(prefix.size());
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  return name.empty() ? "unknown" : name;
}

std::vector<MetricFamily> BuildMetricFamilies(const MetricsInput& input) {
  Families f;
  f.Gauge("gpuctl_agent_info", "The agent (value 1), with its version.", {L("version", GPUCTL_VERSION)}, 1);
  f.Gauge("gpuctl_agent_resident_memory_bytes", "The agent's resident memory.", {},
          static_cast<double>(input.self.resident_bytes));
  f.Gauge("gpuctl_agent_threads", "The agent's threads.", {}, static_cast<double>(input.self.threads));
  f.Gauge("gpuctl_health_up", "1 when the host and GPUs could be read at this scrape.", {}, input.health ? 1 : 0);
  if (input.health) {
    AddHost(f, input.health->host());
    AddGpus(f, *input.health);
  }
  if (input.jobs) {
    size_t kept = 0;
    for (const v1::Job& job : input.jobs->jobs()) {
      if (!Kept(job, input.now_unix_ms)) continue;
      AddJob(f, job, input.now_unix_ms);
      ++kept;
    }
    f.Gauge("gpuctl_jobs", "Jobs shown here (those that ended drop out 10 minutes after).", {},
            static_cast<double>(kept));
  }
  return f.Take();
}

}  // namespace gpuctl::daemon
