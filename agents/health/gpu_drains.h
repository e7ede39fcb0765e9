// The GPUs taken out of service, kept on disk so that a drain outlives the
// agent: a GPU that fell off the bus is still suspect after a restart. A
// drain ends only when a person undrains it.
//
// The file (e.g. STATE_DIR/gpu-drains.json) is JSON, readable by people:
//   {"version": 1, "drains": [{"pci_bus_id": "0000:1b:00", "uuid": "GPU-...",
//     "index": 0, "reason": "Xid 79: GPU has fallen off the bus", "xid": 79,
//     "message": "...", "since_unix_ms": 1764756000000, "manual": false}]}
// Each change is written (atomically: temp file, fsync, rename) before it
// is made in memory: what the agent acts on is always what a restart reads.
//
// Thread-safety: all methods may be called from any thread. One mutex
// guards the set; changes also take a second one, held across the file
// write, that readers never take, so IsDrained never waits on an fsync.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace gpuctl::health {

struct GpuDrain {
  std::string pci_bus_id;   // canonical (NormalizePciBusId) when it parses
  std::string uuid;         // "GPU-..." as NVML prints it; may be empty
  int index = -1;           // NVML's index when drained; informative only
  std::string reason;       // for people: "Xid 79: GPU has fallen off the bus"
  std::optional<int> xid;   // the Xid that drained it, if one did
  std::string message;      // the driver's words, or the person's
  int64_t since_unix_ms = 0;
  bool manual = false;      // drained by a person, not by a fault
};

class GpuDrains {
 public:
  explicit GpuDrains(std::string path);
  GpuDrains(const GpuDrains&) = delete;
  GpuDrains& operator=(const GpuDrains&) = delete;

  // Reads the file, replacing what is held. A missing file is an empty set.
  // A file that cannot be read or parsed is an error naming the path, and
  // the set is left as it was: a corrupt file is never taken for "no GPU
  // drained", nor overwritten. Until a Load succeeds, Drain and Undrain
  // refuse (kFailedPrecondition), for the same reason.
  Status Load();

  // Drains a GPU (named by pci_bus_id, uuid or both; at least one). A GPU
  // already drained keeps its first drain as it was (the first fault's
  // since_unix_ms and reason): true when this call drained it, false when
  // it already was. Errors: kInvalidArgument, kFailedPrecondition, and
  // the file write's (then nothing changed).
  Result<bool> Drain(GpuDrain drain);

  // Ends the drain of the GPU `key` names (a PCI bus id in any form
  // NormalizePciBusId reads, or a uuid): true when one was drained.
  Result<bool> Undrain(std::string_view key);

  bool IsDrained(std::string_view key) const;
  std::optional<GpuDrain> Find(std::string_view key) const;
  std::vector<GpuDrain> All() const;
  const std::string& path() const { return path_; }

 private:
  Status WriteLocked(const std::vector<GpuDrain>& drains) const;

  const std::string path_;
  std::mutex write_mutex_;     // serialises changes and their file writes
  mutable std::mutex mutex_;   // guards drains_ and loaded_; never held across I/O
  std::vector<GpuDrain> drains_;
  bool loaded_ = false;
};

}  // namespace gpuctl::health
