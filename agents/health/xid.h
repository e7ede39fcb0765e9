// NVIDIA Xid reports: the driver's one-line error reports in the kernel log,
// read apart from where they came from (ParseXidLine takes a line; the
// reading is sys::KernelLogSource's). A Xid names its GPU by PCI bus id,
// which nvidia-smi and NVML print in another form: NormalizePciBusId makes
// both one key, so a Xid can be matched to a GPU.
//
// The line grammar (ParseXidLine), each part from what real drivers print:
//
//   line    := [prefix] "NVRM: Xid (" ["PCI:"] busid [" " tags] "): " xid
//              ["," " "* [pid ", "] [name ", "] message]
//   prefix  := kmsg | [syslog "kernel: "] {"[" stamp "]" " "*}
//   kmsg    := PRIORITY "," SEQ "," USEC "," FLAGS {"," field} ";"    (/dev/kmsg)
//   stamp   := "    5.123456" (dmesg) | "Thu Dec  3 10:00:00 2026" (dmesg -T)
//   tags    := MIG tags some drivers add ("GPU-I:01 GPU-C:00"), ignored
//   pid     := "pid=" (DIGITS | "'<unknown>'" | "'N/A'" | ...)   non-digits: unknown
//   name    := "name=" NAME      (a comm; ends at the first ", ")
//
// Older drivers print neither pid nor name ("79, GPU has fallen off the
// bus."); GSP ones may print a pid without a name.
//
// Trust: only a /dev/kmsg record says who wrote it. Its PRIORITY carries the
// facility, and the kernel never lets user space write facility 0 (kern)
// there (printk.c, devkmsg_write: "we enforce LOG_USER, to be able to
// reliably distinguish kernel-generated messages from userspace-injected
// ones"), so a kmsg record with another facility is refused here. Text lines
// (dmesg output, a syslog file) carry no such proof: `logger -t kernel`
// writes a line that reads like the kernel's. Decide drains on /dev/kmsg.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpuctl::health {

// Longer lines are not kernel log lines (printk caps a record near 8 KiB):
// they fail to parse without being scanned.
inline constexpr size_t kMaxXidLineBytes = 64 * 1024;

struct XidEvent {
  std::string pci_bus_id;               // canonical: NormalizePciBusId's form
  int xid = 0;
  std::optional<int64_t> pid;           // absent: not printed, or '<unknown>'
  std::string process_name;             // empty: not printed; "<unknown>" kept as printed
  std::string message;                  // the rest of the line; well-formed UTF-8
  std::optional<int64_t> kmsg_usec;     // /dev/kmsg records only: microseconds since boot
  std::optional<uint64_t> kmsg_seq;     // /dev/kmsg records only: the record's sequence number
};

// The Xid on `line`, or nullopt when the line is not one (any other kernel
// message, a /dev/kmsg continuation line " KEY=VALUE", a truncated or
// malformed Xid line, a line over kMaxXidLineBytes). Never reads outside
// `line`; any bytes are fine.
std::optional<XidEvent> ParseXidLine(std::string_view line);

// One key for a GPU's PCI address, whoever printed it:
//   "00000000:1B:00.0" (nvidia-smi, NVML)  -> "0000:1b:00"
//   "0000:1b:00"       (a Xid line)        -> "0000:1b:00"
//   "1b:00.0"          (lspci, no domain)  -> "0000:1b:00"
// Lowercase hex; the domain at least 4 digits (more only when its value
// needs them, as the driver's "%04x" prints it); bus and device 2 digits;
// the function dropped (a GPU's Xid names the device, not a function).
// Surrounding blanks are ignored. nullopt for anything else: a domain over
// 8 hex digits, a bus over 0xff, a device over 0x1f, a function over 7.
std::optional<std::string> NormalizePciBusId(std::string_view id);

}  // namespace gpuctl::health
