// Finds the newest complete checkpoint under a job's --checkpoint-dir, so a
// relaunch resumes from it and never from one still being written or left
// half-written by a crash. Checkpoints are written and deleted while we scan:
// an entry that vanishes mid-scan is skipped, never an error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "agents/sys/host_fs.h"

namespace gpuctl::sys {

struct CheckpointScanOptions {
  std::string dir;                        // --checkpoint-dir
  // --checkpoint-complete FILE: a file name that, inside a checkpoint
  // directory, marks it complete ("": none). When set, a directory that is
  // not Hugging Face, DCP or DeepSpeed is complete only with this file in it.
  std::string complete_marker;
  // Absolute paths some process of the job holds open for writing (the union
  // of OpenForWrite over the job's processes).
  std::set<std::string> open_for_write;
  int64_t now_unix_ms = 0;
  int64_t quiet_ms = 30'000;              // a plain checkpoint must be unchanged this long
  size_t max_entries = 200'000;           // entries walked before stopping (a bound, not an error)
};

// Format names.
inline constexpr std::string_view kFormatHf = "hf";
inline constexpr std::string_view kFormatDcp = "dcp";
inline constexpr std::string_view kFormatDeepSpeed = "deepspeed";
inline constexpr std::string_view kFormatMarker = "marker";
inline constexpr std::string_view kFormatPlain = "plain";

struct Checkpoint {
  std::string path;              // absolute, under the canonical form of opts.dir
  std::string format;            // one of the kFormat* names
  std::optional<uint64_t> step;  // StepFromName of its name
  int64_t mtime_unix_ms = 0;     // newest mtime of it and everything inside it
  uint64_t bytes = 0;            // regular files' sizes, summed
};

struct CheckpointCandidate {
  Checkpoint checkpoint;
  bool complete = false;
  std::string why_not;  // for people: what is missing; "" when complete
};

// Every candidate, sorted by path: each direct child of opts.dir (symlinks
// are not candidates), except in a DeepSpeed tree (a directory with a file
// `latest`, opts.dir or a child of it) where its subdirectories are, and
// only the one `latest` names is complete. A missing or empty dir gives {}.
// Complete, by format (the first that applies):
//   hf         checkpoint-N with trainer_state.json in it, not open for
//              writing, and a whole JSON object (not one a kill cut short)
//   deepspeed  the subdirectory `latest` names
//   dcp        has .metadata (written last), not open for writing; a directory
//              with *.distcp files but no .metadata is a partial dcp one
//   marker     has opts.complete_marker in it
//   plain      nothing in it open for writing and nothing changed for quiet_ms
// Temporary names (.x, tmp*, *.tmp, *.partial, *.incomplete) never are.
// The walk stops after max_entries entries: a plain candidate it did not
// finish is not complete (it could not be shown quiet); one it did not reach
// is listed as not examined.
std::vector<CheckpointCandidate> ScanCheckpoints(const CheckpointScanOptions& opts);

// The newest complete candidate of ScanCheckpoints, or nullopt.
std::optional<Checkpoint> FindLatestCompleteCheckpoint(const CheckpointScanOptions& opts);

// Whether `a` is newer than `b`: the higher step when both have one and they
// differ, else the newer mtime, else the greater path.
bool IsNewerCheckpoint(const Checkpoint& a, const Checkpoint& b);

// The number at the end of a name (checkpoint-1200, global_step1200, step_7,
// epoch3), or before its last extension (model_step100.pt); nullopt when
// there is none or it does not fit.
std::optional<uint64_t> StepFromName(std::string_view name);

// The "flags:" field of a /proc/PID/fdinfo/N file (octal), or nullopt.
std::optional<unsigned> ParseFdinfoFlags(std::string_view fdinfo);

// The paths (targets of proc/PID/fd/N) that process `pid` holds open for
// writing (O_WRONLY or O_RDWR in fdinfo's flags). Pipes, sockets and fds
// closed while we read are left out. Tests pass a HostFs rooted at a fixture.
std::set<std::string> OpenForWrite(int64_t pid, const sys::HostFs& host = sys::HostFs());

// A cheap signature of the tree under `dir` (itself included; symlinks not
// followed), compared between samples to tell whether a checkpoint is growing.
struct TreeSignature {
  uint64_t bytes = 0;
  uint64_t entries = 0;
  int64_t newest_mtime_ns = 0;
  bool operator==(const TreeSignature&) const = default;
};
TreeSignature SignatureOf(const std::string& dir, size_t max_entries = 200'000);

}  // namespace gpuctl::sys
