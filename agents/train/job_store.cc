#include "agents/train/job_store.h"

#include <algorithm>
#include <filesystem>

#include <spdlog/spdlog.h>

#include "agents/sys/files.h"
#include "common/json_text.h"

namespace gpuctl::train {

JobStore::JobStore(std::string state_dir) : jobs_dir_(std::move(state_dir) + "/jobs") {}

std::string JobStore::JobDir(const std::string& name) const { return jobs_dir_ + "/" + name; }
std::string JobStore::LogPath(const std::string& name) const { return JobDir(name) + "/output.log"; }
std::string JobStore::ExitPath(const std::string& name) const { return JobDir(name) + "/exit_status"; }

Status JobStore::Prepare(const std::string& name) const { return sys::EnsureDir(JobDir(name), 0700); }

Status JobStore::Save(const JobRecord& record) const {
  return sys::WriteFileAtomic(JobDir(record.spec.name) + "/job.json", DumpJson(ToJson(record), 2) + "\n", 0600);
}

Result<JobRecord> JobStore::Load(const std::string& name) const {
  std::string path = JobDir(name) + "/job.json";
  if (!sys::PathExists(path)) return NotFound("no job named '" + name + "' (see gpuctl train list)");
  Result<std::string> text = sys::ReadWholeFile(path);
  if (!text.ok()) return text.status();
  nlohmann::json doc = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return InvalidArgument(path + " is not valid JSON");
  Result<JobRecord> record = JobRecordFromJson(doc);
  if (!record.ok()) return record.status().Wrap(path);
  return record;
}

std::vector<JobRecord> JobStore::LoadAll() const {
  std::vector<JobRecord> records;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(jobs_dir_, ec)) {
    if (!entry.is_directory()) continue;
    std::string name = entry.path().filename().string();
    if (!sys::PathExists(JobDir(name) + "/job.json")) continue;
    Result<JobRecord> record = Load(name);
    if (record.ok()) {
      records.push_back(std::move(record).value());
    } else {
      spdlog::warn("skipping job '{}': {}", name, record.status().message());
    }
  }
  std::sort(records.begin(), records.end(),
            [](const JobRecord& a, const JobRecord& b) { return a.created_unix_ms < b.created_unix_ms; });
  return records;
}

}  // namespace gpuctl::train
