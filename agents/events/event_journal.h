// The event log on disk, so that events and their seq survive agent
// restarts: `gpuctl events --after N` after a restart still gets the new
// run's first events (a guard_kill included), never a seq reused.
//
// STATE_DIR/events/events.jsonl, one JSON object per line, appended as
// events are published; at `max_bytes` it becomes events.jsonl.1 (replacing
// the one before) and a new file starts, so the journal stays under twice
// that. Lines that do not parse (a torn last line after a crash) are
// skipped when read.
//
// A full disk (a job's log can fill the disk of the state directory) must
// not lose the events that say how jobs ended: the journal keeps the next
// 256 KiB past its end allocated (fallocate, the file's size unchanged), so
// appends land in blocks it already owns, and sets more aside only while the
// disk has room to spare.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "agents/events/agent_event.h"
#include "agents/sys/unique_fd.h"
#include "common/status.h"

namespace gpuctl::events {

class EventJournal {
 public:
  static constexpr uint64_t kDefaultMaxBytes = 4 << 20;
  static constexpr uint64_t kReserveBytes = 256 << 10;

  // Creates `dir` (0700) and opens the journal for appending. Errors from
  // the filesystem, naming the path.
  static Result<std::unique_ptr<EventJournal>> Open(const std::string& dir, uint64_t max_bytes = kDefaultMaxBytes);

  // The newest `max` events on disk, oldest first (both files).
  std::vector<AgentEvent> LoadRecent(size_t max) const;
  // The same, and before them the newest `also_max` events `also` picks
  // (the deciding ones an EventLog keeps aside), each list oldest first.
  struct Loaded {
    std::vector<AgentEvent> recent;
    std::vector<AgentEvent> older_kept;
  };
  Loaded LoadRecent(size_t max, const std::function<bool(const AgentEvent&)>& also, size_t also_max) const;
  // Appends one event; rotates when the file has grown past max_bytes.
  // Errors are logged by the caller; the event stays in memory.
  Status Append(const AgentEvent& event);

  // An event as a journal line (no newline), and back. Pure.
  static std::string ToLine(const AgentEvent& event);
  static Result<AgentEvent> FromLine(std::string_view line);

 private:
  EventJournal(std::string dir, uint64_t max_bytes, sys::UniqueFd fd, uint64_t size);
  Status Rotate();
  Status Write(const std::string& line);
  // Allocates kReserveBytes past the end once less than half of it is left,
  // while the disk has four times that free; best effort.
  void KeepReserve();
  std::string Current() const { return dir_ + "/events.jsonl"; }
  std::string Previous() const { return dir_ + "/events.jsonl.1"; }

  std::string dir_;
  uint64_t max_bytes_;
  sys::UniqueFd fd_;
  uint64_t size_;
  uint64_t allocated_ = 0;  // the file's blocks reach this far
};

}  // namespace gpuctl::events
