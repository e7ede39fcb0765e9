// How many of a run's log events are kept: bounded by bytes, so a long run's
// thousand exceptions never crowd out what came last, and never by dropping
// the newest. The events that decide something are kept whatever the bytes:
// cuda_oom (the OOM remediation reads them), nccl_error, signal and
// alloc_conf_invalid (they name why a run ended), and the last traceback.
// What is dropped is the oldest of the rest, and counted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "agents/train/job_record.h"

namespace gpuctl::train {

// The events that decide nothing, by their approximate JSON size.
inline constexpr size_t kRunEventBytes = 64 << 10;
// Deciding events are few in any real run (one per rank that failed); past
// this many (a log printing OOMs in a loop) the oldest of them go too, so
// that a record stays bounded whatever the log holds.
inline constexpr size_t kRunDecidingEvents = 128;

bool DecidesSomething(const LogEvent& event);
// About what the event takes in a record and on the wire.
size_t EventBytes(const LogEvent& event);

// Adds `event` as the newest of `events`, then drops the oldest events the
// bounds above exclude. Returns how many were dropped (0 or more).
uint64_t KeepEvent(std::vector<JobEventRecord>& events, JobEventRecord event);

}  // namespace gpuctl::train
