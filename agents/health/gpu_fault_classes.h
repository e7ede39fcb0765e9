// What a Xid says about whom to blame: the GPU (drain it: no new work lands
// there until a person undrains it), the application that ran on it (record
// it on the job; the GPU stays in service), or nobody yet (log it).
//
// One table (XidTable) holds every Xid we name, with its class, the words
// used in messages, and where NVIDIA documents it. A Xid not in the table is
// informational: draining a GPU on a number nobody has read about would take
// a healthy GPU out of service.
#pragma once

#include <span>
#include <string_view>

namespace gpuctl::health {

enum class XidClass {
  kGpuFault,       // the GPU is at fault: drain it
  kApplication,    // the job's own fault: recorded on the job, not the GPU
  kInformational,  // neither: logged, no action
};

// "gpu_fault", "application", "informational": for records and messages.
std::string_view XidClassName(XidClass cls);

struct XidInfo {
  int xid;
  XidClass cls;
  std::string_view summary;  // a few words for messages ("GPU has fallen off the bus")
  std::string_view source;   // where NVIDIA documents it (document and section)
};

// Sorted by xid, no xid twice (checked at compile time).
std::span<const XidInfo> XidTable();

// The table's entry for `xid`, or nullptr.
const XidInfo* FindXid(int xid);

// The entry's class; kInformational for a Xid not in the table.
XidClass ClassifyXid(int xid);

// The entry's summary; "unlisted Xid" for one not in the table.
std::string_view XidSummary(int xid);

// A GPU fault that is not a Xid: NVML's remapped-rows query reports that a
// row remapping failed (nvmlDeviceGetRemappedRows, failureOccurred). The
// memory has an error it can no longer fence off, so it drains the GPU like
// a kGpuFault Xid; this is the drain's reason.
// Source: NVIDIA "GPU Memory Error Management", section "Row Remapping";
// NVML API reference, nvmlDeviceGetRemappedRows.
inline constexpr std::string_view kRowRemapFailure = "row remap failure";

}  // namespace gpuctl::health
