#include "agents/health/gpu_drains.h"

#include <algorithm>
#include <utility>

#include <nlohmann/json.hpp>

#include "agents/health/xid.h"
#include "agents/sys/files.h"
#include "common/json_integer.h"
#include "common/json_text.h"

namespace gpuctl::health {
namespace {

constexpr int kDrainFileVersion = 1;

bool DrainUuidEquals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
           return lower(x) == lower(y);
         });
}

// Does `key` (a bus id in any form, or a uuid) name the GPU of `drain`?
bool DrainMatchesKey(const GpuDrain& drain, std::string_view key) {
  if (key.empty()) return false;
  if (auto bus_id = NormalizePciBusId(key); bus_id && *bus_id == drain.pci_bus_id) return true;
  return !drain.uuid.empty() && DrainUuidEquals(drain.uuid, key);
}

// Do two drains name the same GPU (by either name)?
bool DrainsSameGpu(const GpuDrain& a, const GpuDrain& b) {
  if (!a.pci_bus_id.empty() && a.pci_bus_id == b.pci_bus_id) return true;
  return !a.uuid.empty() && DrainUuidEquals(a.uuid, b.uuid);
}

nlohmann::json DrainToJson(const GpuDrain& drain) {
  return {{"pci_bus_id", drain.pci_bus_id},
          {"uuid", drain.uuid},
          {"index", drain.index},
          {"reason", drain.reason},
          {"xid", drain.xid ? nlohmann::json(*drain.xid) : nlohmann::json(nullptr)},
          {"message", drain.message},
          {"since_unix_ms", drain.since_unix_ms},
          {"manual", drain.manual}};
}

std::string DrainString(const nlohmann::json& entry, const char* key) {
  auto it = entry.find(key);
  return it == entry.end() ? std::string() : it->get<std::string>();
}

// Throws nlohmann::json::exception on a malformed entry.
GpuDrain DrainFromJson(const nlohmann::json& entry) {
  if (!entry.is_object()) throw nlohmann::json::type_error::create(302, "a drain is not an object", &entry);
  GpuDrain drain;
  drain.pci_bus_id = DrainString(entry, "pci_bus_id");
  drain.uuid = DrainString(entry, "uuid");
  if (drain.pci_bus_id.empty() && drain.uuid.empty()) {
    throw nlohmann::json::other_error::create(501, "a drain names no GPU (no pci_bus_id, no uuid)", &entry);
  }
  if (!drain.pci_bus_id.empty()) {
    auto bus_id = NormalizePciBusId(drain.pci_bus_id);
    if (!bus_id) {
      throw nlohmann::json::other_error::create(501, "pci_bus_id '" + drain.pci_bus_id + "' is not a PCI bus id",
                                                &entry);
    }
    drain.pci_bus_id = *bus_id;
  }
  drain.index = JsonIntegerOr<int>(entry, "index", -1);
  drain.reason = DrainString(entry, "reason");
  if (auto it = entry.find("xid"); it != entry.end() && !it->is_null()) drain.xid = JsonInteger<int>(*it);
  drain.message = DrainString(entry, "message");
  drain.since_unix_ms = JsonInteger<int64_t>(entry.at("since_unix_ms"));
  if (auto it = entry.find("manual"); it != entry.end()) drain.manual = it->get<bool>();
  return drain;
}

}  // namespace

GpuDrains::GpuDrains(std::string path) : path_(std::move(path)) {}

Status GpuDrains::Load() {
  std::lock_guard write_lock(write_mutex_);
  Result<std::string> text = sys::ReadWholeFile(path_);
  std::vector<GpuDrain> drains;
  if (!text.ok() && text.status().code() != ErrorCode::kNotFound) {
    return text.status().Wrap("reading the GPU drain file");
  }
  if (text.ok()) {
    auto corrupt = [&](const std::string& why) {
      return FailedPrecondition("the GPU drain file " + path_ + " is corrupt (" + why +
                                "): fix it, or move it aside to forget every drain it holds");
    };
    nlohmann::json json = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (json.is_discarded()) return corrupt("not JSON");
    try {
      if (!json.is_object()) return corrupt("not a JSON object");
      if (JsonIntegerOr<int>(json, "version", 0) != kDrainFileVersion) {
        return corrupt("version is not " + std::to_string(kDrainFileVersion));
      }
      const nlohmann::json& list = json.at("drains");
      if (!list.is_array()) return corrupt("\"drains\" is not an array");
      for (const nlohmann::json& entry : list) drains.push_back(DrainFromJson(entry));
    } catch (const nlohmann::json::exception& e) {
      return corrupt(e.what());
    }
  }
  std::lock_guard lock(mutex_);
  drains_ = std::move(drains);
  loaded_ = true;
  return Status::Ok();
}

Result<bool> GpuDrains::Drain(GpuDrain drain) {
  if (drain.pci_bus_id.empty() && drain.uuid.empty()) {
    return InvalidArgument("a GPU drain needs the GPU's PCI bus id or uuid");
  }
  if (!drain.pci_bus_id.empty()) {
    auto bus_id = NormalizePciBusId(drain.pci_bus_id);
    if (!bus_id) {
      return InvalidArgument("'" + drain.pci_bus_id +
                             "' is not a PCI bus id: give it as nvidia-smi prints it (00000000:1B:00.0)");
    }
    drain.pci_bus_id = std::move(*bus_id);
  }
  std::lock_guard write_lock(write_mutex_);
  std::vector<GpuDrain> next;
  {
    std::lock_guard lock(mutex_);
    if (!loaded_) return FailedPrecondition("the GPU drain file " + path_ + " has not been loaded");
    for (const GpuDrain& held : drains_) {
      if (DrainsSameGpu(held, drain)) return false;
    }
    next = drains_;
  }
  next.push_back(std::move(drain));
  if (Status written = WriteLocked(next); !written.ok()) return written;
  std::lock_guard lock(mutex_);
  drains_ = std::move(next);
  return true;
}

Result<bool> GpuDrains::Undrain(std::string_view key) {
  std::lock_guard write_lock(write_mutex_);
  std::vector<GpuDrain> next;
  {
    std::lock_guard lock(mutex_);
    if (!loaded_) return FailedPrecondition("the GPU drain file " + path_ + " has not been loaded");
    next = drains_;
  }
  size_t before = next.size();
  std::erase_if(next, [&](const GpuDrain& drain) { return DrainMatchesKey(drain, key); });
  if (next.size() == before) return false;
  if (Status written = WriteLocked(next); !written.ok()) return written;
  std::lock_guard lock(mutex_);
  drains_ = std::move(next);
  return true;
}

bool GpuDrains::IsDrained(std::string_view key) const { return Find(key).has_value(); }

std::optional<GpuDrain> GpuDrains::Find(std::string_view key) const {
  std::lock_guard lock(mutex_);
  for (const GpuDrain& drain : drains_) {
    if (DrainMatchesKey(drain, key)) return drain;
  }
  return std::nullopt;
}

std::vector<GpuDrain> GpuDrains::All() const {
  std::lock_guard lock(mutex_);
  return drains_;
}

Status GpuDrains::WriteLocked(const std::vector<GpuDrain>& drains) const {
  nlohmann::json list = nlohmann::json::array();
  for (const GpuDrain& drain : drains) list.push_back(DrainToJson(drain));
  nlohmann::json file = {{"version", kDrainFileVersion}, {"drains", std::move(list)}};
  Status written = sys::WriteFileAtomic(path_, DumpJson(file, 2) + "\n", 0644);
  return written.ok() ? written : written.Wrap("writing the GPU drain file");
}

}  // namespace gpuctl::health
