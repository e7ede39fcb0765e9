// Pure parsers for cgroup control files (v1 and v2). Reading is the drivers'
// job; these take the text so tests can feed literals.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace gpuctl::sys {

// One unsigned number and an optional newline: memory.current,
// memory.usage_in_bytes, memory.limit_in_bytes. Errors: kInvalidArgument.
Result<uint64_t> ParseCgroupNumber(std::string_view text);

// v2 memory.max / memory.high: a number, or "max" for no limit (nullopt).
// Errors: kInvalidArgument.
Result<std::optional<uint64_t>> ParseCgroupMax(std::string_view text);

// v1 reports "no limit" as PAGE_COUNTER_MAX pages in bytes
// (9223372036854771712 with 4 KiB pages; the figure depends on the page size),
// never as a word. No machine has 2^62 bytes, so anything at or above that is
// taken as unlimited whatever the page size.
bool IsV1Unlimited(uint64_t limit_in_bytes);

// cgroup.procs: one pid per line, possibly empty. Errors: kInvalidArgument
// for a line that is not a positive number.
Result<std::vector<int64_t>> ParseCgroupProcs(std::string_view text);

// "key value" lines: v2 memory.events and memory.stat, v1 memory.oom_control
// and memory.stat. Blank lines are skipped. Errors: kInvalidArgument for a line
// without exactly two words or with a value that is not an unsigned number.
using FlatKeyed = std::map<std::string, uint64_t, std::less<>>;
Result<FlatKeyed> ParseFlatKeyed(std::string_view text);

// Reclaimable file cache from a memory.stat: active + inactive file pages
// less dirty and writeback ones (clamped at 0; sums are capped at 2^64-1
// rather than wrapped). The two file keys must be
// there (kNotFound naming `source` otherwise); dirty and writeback count as
// 0 when absent.
Result<uint64_t> ReclaimableFileFrom(const FlatKeyed& stat, std::string_view active, std::string_view inactive,
                                     std::string_view dirty, std::string_view writeback, const std::string& source);

// A cgroup given as its directory (/sys/fs/cgroup/memory/lxc/c1) made the
// path under the hierarchy that the drivers take (/lxc/c1): `mount` is the
// hierarchy's directory. A path not under `mount` is returned as it is.
std::string StripCgroupMount(std::string_view path, std::string_view mount);

// True when `list` (a space-separated controller list such as v2's
// cgroup.controllers or cgroup.subtree_control) names `controller`.
bool ControllerListHas(std::string_view list, std::string_view controller);

}  // namespace gpuctl::sys
