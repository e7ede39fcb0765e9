// Pure parsers for nvidia-smi's CSV query output (no I/O; tested with the
// real captures in ../shared/fixtures/gpu-host).
//
// nvidia-smi separates cells with ", " and does not quote, so a GPU or process
// name that contains ", " spills into extra cells; the parser gives the extra
// cells back to the one free-text column (name, process_name). Values it
// cannot give ("[N/A]", "[Not Supported]", "N/A", any "[...]") leave the field
// empty. Units ("143771 MiB", "81.94 W", "0 %") are accepted so the plain
// --format=csv form parses too; a header line, when present, decides the
// column order (and its units are ignored).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agents/sys/gpu_types.h"
#include "common/status.h"

namespace gpuctl::sys {

// The clock-reasons field was renamed: drivers before 535 only know
// clocks_throttle_reasons.active; newer ones accept both and print the
// header as clocks_event_reasons.active.
enum class ClockReasonsField { kEvent, kThrottle };

// The fields gpuctl asks --query-gpu for, in order. The last,
// retired_pages.pending ("Yes", "No", "[N/A]" on Ampere and later), is one
// gpuctl can do without (see DropRefusedField in nvidia_smi_refusal.h).
std::vector<std::string> GpuQueryFields(ClockReasonsField reasons = ClockReasonsField::kEvent);
// The fields gpuctl asks --query-compute-apps for, in order.
std::vector<std::string> ComputeAppsQueryFields();
// "a,b,c": the value of --query-gpu= / --query-compute-apps=.
std::string JoinQueryFields(const std::vector<std::string>& fields);

// Parses --query-gpu output. `fields` is the query's field list, used when
// the output has no header; fields gpuctl does not know (pstate, ...) are
// skipped. Errors (kInvalidArgument) name the line and field that did not
// parse.
Result<std::vector<GpuDevice>> ParseGpuQueryCsv(std::string_view text,
                                                const std::vector<std::string>& fields = GpuQueryFields());

// One row of --query-compute-apps.
struct ComputeApp {
  std::string gpu_uuid;
  GpuProcessInfo process;  // used_memory_bytes is 0 where nvidia-smi says [N/A]
};

Result<std::vector<ComputeApp>> ParseComputeAppsCsv(
    std::string_view text, const std::vector<std::string>& fields = ComputeAppsQueryFields());

// Appends each app to the process list of the device with its uuid; apps of
// GPUs not in `devices` are dropped.
void AttachComputeApps(std::vector<GpuDevice>& devices, const std::vector<ComputeApp>& apps);

// One row of --query-remapped-rows (Ampere and later; nvidia-smi before R450
// has no such switch, and --query-gpu knows none of its fields). Pending and
// failure are "Yes"/"No"; "[N/A]" (a GPU without row remapping) leaves them
// empty.
struct RemappedRows {
  std::string gpu_uuid;
  std::optional<bool> pending;
  std::optional<bool> failure;
};

// The fields gpuctl asks --query-remapped-rows for, in order.
std::vector<std::string> RemappedRowsQueryFields();

Result<std::vector<RemappedRows>> ParseRemappedRowsCsv(
    std::string_view text, const std::vector<std::string>& fields = RemappedRowsQueryFields());

// Sets row_remap_pending and row_remap_failure of the device with each row's
// uuid; rows of GPUs not in `devices` are dropped.
void AttachRemappedRows(std::vector<GpuDevice>& devices, const std::vector<RemappedRows>& rows);

}  // namespace gpuctl::sys
