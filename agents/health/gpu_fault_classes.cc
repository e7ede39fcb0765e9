#include "agents/health/gpu_fault_classes.h"

#include <algorithm>
#include <iterator>

namespace gpuctl::health {
namespace {

// Sources, by section of NVIDIA's "Xid Errors" document (GPU Deployment and
// Management Documentation, docs.nvidia.com/deploy/xid-errors/):
//   "Analyzing Xid Errors with the Xid Catalog", Table 1 "Xids": the catalog
//     for Ampere and newer, with each Xid's mnemonic, description and
//     resolution buckets (immediate and investigatory action);
//   "Xid Error Listing": the earlier table of each Xid's possible causes
//     (HW error, driver error, user app error, ...).
// And for the memory Xids also "Dynamic Page Retirement", section "XIDs".
//
// Why each class: kGpuFault where the remedy is on the GPU (reset, reboot,
// service) whatever ran on it; kApplication where the documents point first
// at the application that ran (for 13 the catalog's immediate action is
// RESTART_APP), so the job is told and the GPU stays in service. Sorted by
// xid.
constexpr XidInfo kXidTable[] = {
    // Xid Catalog row 13 (ROBUST_CHANNEL_GR_EXCEPTION, immediate action
    // RESTART_APP); Xid Error Listing 13: out-of-range access, illegal
    // instruction in the user's kernel.
    {13, XidClass::kApplication, "Graphics engine exception",
     "Xid Errors: Analyzing Xid Errors with the Xid Catalog (Table 1, Xid 13); Xid Error Listing"},
    // Xid Catalog row 31; Xid Error Listing 31: an MMU fault, most often an
    // illegal address in the application.
    {31, XidClass::kApplication, "GPU memory page fault",
     "Xid Errors: Analyzing Xid Errors with the Xid Catalog (Table 1, Xid 31); Xid Error Listing"},
    // Xid Catalog row 43; Xid Error Listing 43: a channel stopped after the
    // application's own error; the GPU carries on.
    {43, XidClass::kApplication, "GPU stopped processing",
     "Xid Errors: Analyzing Xid Errors with the Xid Catalog (Table 1, Xid 43); Xid Error Listing"},
    // Xid Catalog row 45; Xid Error Listing 45: channels torn down when a
    // process exits or is killed (preemptive cleanup).
    {45, XidClass::kApplication, "Preemptive cleanup, due to previous errors",
     "Xid Errors: Analyzing Xid Errors with the Xid Catalog (Table 1, Xid 45); Xid Error Listing"},
    // Xid Catalog row 48; Xid Error Listing 48; Dynamic Page Retirement,
    // XIDs: "A DBE has occurred". Uncorrectable memory error.
    {48, XidClass::kGpuFault, "Double bit ECC error (DBE)",
     "Xid Errors: Analyzing Xid Errors with the Xid Catalog (Table 1, Xid 48); Xid Error Listing; "
     "Dynamic Page Retirement: XIDs"},
    // Xid Error Listing 61: a firmware warning; the GPU keeps working.
    {61, XidClass::kInformational, "Internal micro-controller breakpoint/warning",
     "Xid Errors: Xid Error Listing (Xid 61)"},
    // Xid Catalog row 63; Dynamic Page Retirement, XIDs: a page retired or a
    // row marked for remapping. It takes effect at the next GPU reset, so the
    // GPU is drained until it has had one.
    {63, XidClass::kGpuFault, "ECC page retirement or row remapping recording event",
     "Xid Errors: Analyzing Xid Errors with the Xid Catalog (Table 1, Xid 63); Dynamic Page Retirement: XIDs"},
    // Xid Catalog row 64; Dynamic Page Retirement, XIDs: retirement or
    // remapping failed, the bad memory stays in use.
    {64, XidClass::kGpuFault, "ECC page retirement or row remapper recording failure",
     "Xid Errors: Analyzing Xid Errors with the Xid Catalog (Table 1, Xid 64); Dynamic Page Retirement: XIDs"},
    // Xid Catalog row 68; Xid Error Listing 68: the video decoder (NVDEC0)
    // raised an exception on the application's stream.
    {68, XidClass::kApplication, "NVDEC0 exception",
     "Xid Errors: Analyzing Xid Errors with the Xid Catalog (Table 1, Xid 68); Xid Error Listing"},
    // Xid Catalog row 74; Xid Error Listing 74: an NVLink link error.
    {74, XidClass::kGpuFault, "NVLink error",
     "Xid Errors: Analyzing Xid Errors with the Xid Catalog (Table 1, Xid 74); Xid Error Listing"},
    // Xid Catalog row 79; Xid Error Listing 79: the GPU no longer answers on
    // PCIe.
    {79, XidClass::kGpuFault, "GPU has fallen off the bus",
     "Xid Errors: Analyzing Xid Errors with the Xid Catalog (Table 1, Xid 79); Xid Error Listing"},
    // Xid Error Listing 92: correctable errors above a rate; corrected, so
    // only a trend to watch.
    {92, XidClass::kInformational, "High single-bit ECC error rate",
     "Xid Errors: Xid Error Listing (Xid 92)"},
    // Xid Catalog row 94: an uncorrectable error contained to the
    // applications that touched it; the GPU needs a reset to recover the
    // memory.
    {94, XidClass::kGpuFault, "Contained ECC error",
     "Xid Errors: Analyzing Xid Errors with the Xid Catalog (Table 1, Xid 94); Xid Error Listing"},
    // Xid Catalog row 95: an uncorrectable error that could not be
    // contained; every application on the GPU is affected.
    {95, XidClass::kGpuFault, "Uncontained ECC error",
     "Xid Errors: Analyzing Xid Errors with the Xid Catalog (Table 1, Xid 95); Xid Error Listing"},
    // Xid Catalog row 109: a context switch timed out; the channel of the
    // application is reset.
    {109, XidClass::kApplication, "Context switch timeout",
     "Xid Errors: Analyzing Xid Errors with the Xid Catalog (Table 1, Xid 109)"},
    // Xid Catalog row 119: the GPU System Processor did not answer an RPC.
    {119, XidClass::kGpuFault, "GSP RPC timeout",
     "Xid Errors: Analyzing Xid Errors with the Xid Catalog (Table 1, Xid 119)"},
    // Xid Catalog row 120: the GPU System Processor reported an error.
    {120, XidClass::kGpuFault, "GSP error",
     "Xid Errors: Analyzing Xid Errors with the Xid Catalog (Table 1, Xid 120)"},
    // Xid Catalog row 154 and the catalog's "Xid 154 linkage" column: the
    // driver says the GPU needs a recovery action (reset, reboot) before
    // it is fit for work.
    {154, XidClass::kGpuFault, "GPU recovery action changed",
     "Xid Errors: Analyzing Xid Errors with the Xid Catalog (Table 1, Xid 154)"},
};

constexpr bool XidTableIsSortedAndUnique() {
  for (size_t i = 1; i < std::size(kXidTable); ++i) {
    if (kXidTable[i - 1].xid >= kXidTable[i].xid) return false;
  }
  return true;
}
static_assert(XidTableIsSortedAndUnique(), "kXidTable must be sorted by xid, each xid once");

}  // namespace

std::string_view XidClassName(XidClass cls) {
  switch (cls) {
    case XidClass::kGpuFault: return "gpu_fault";
    case XidClass::kApplication: return "application";
    case XidClass::kInformational: return "informational";
  }
  return "informational";
}

std::span<const XidInfo> XidTable() { return kXidTable; }

const XidInfo* FindXid(int xid) {
  const XidInfo* end = std::end(kXidTable);
  const XidInfo* it =
      std::lower_bound(std::begin(kXidTable), end, xid, [](const XidInfo& info, int x) { return info.xid < x; });
  return it != end && it->xid == xid ? it : nullptr;
}

XidClass ClassifyXid(int xid) {
  const XidInfo* info = FindXid(xid);
  return info ? info->cls : XidClass::kInformational;
}

std::string_view XidSummary(int xid) {
  const XidInfo* info = FindXid(xid);
  return info ? info->summary : "unlisted Xid";
}

}  // namespace gpuctl::health
