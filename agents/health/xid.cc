#include "agents/health/xid.h"

#include <charconv>
#include <cstdio>
#include <system_error>

#include "common/utf8.h"

namespace gpuctl::health {
namespace {

// Helper names carry "Xid": the batched (unity) builds put this file in one
// translation unit with the rest of the library.
constexpr std::string_view kXidMarker = "NVRM: Xid (";
// Bounds on the small parts, so a hostile line cannot make a part huge.
constexpr size_t kXidMaxStampBytes = 64;      // "[Thu Dec  3 10:00:00 2026]" is 26
constexpr size_t kXidMaxTagBytes = 128;       // " GPU-I:01 GPU-C:00"
constexpr size_t kXidMaxKmsgFieldBytes = 256; // "-" or "-,caller=T123"

bool XidIsDigit(char c) { return c >= '0' && c <= '9'; }

bool XidIsBlank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// Takes `prefix` off the front of `text` when it is there.
bool XidConsume(std::string_view& text, std::string_view prefix) {
  if (!text.starts_with(prefix)) return false;
  text.remove_prefix(prefix.size());
  return true;
}

std::string_view XidTakeDigits(std::string_view& text) {
  size_t n = 0;
  while (n < text.size() && XidIsDigit(text[n])) ++n;
  std::string_view digits = text.substr(0, n);
  text.remove_prefix(n);
  return digits;
}

// Decimal digits only (no sign, no blanks) that fit T.
template <typename T>
std::optional<T> XidDecimal(std::string_view digits) {
  if (digits.empty()) return std::nullopt;
  for (char c : digits) {
    if (!XidIsDigit(c)) return std::nullopt;
  }
  T value{};
  const char* end = digits.data() + digits.size();
  auto [ptr, ec] = std::from_chars(digits.data(), end, value);
  if (ec != std::errc{} || ptr != end) return std::nullopt;
  return value;
}

// 1 to max_digits hex digits.
std::optional<uint32_t> XidHex(std::string_view digits, size_t max_digits) {
  if (digits.empty() || digits.size() > max_digits) return std::nullopt;
  uint32_t value = 0;
  for (char c : digits) {
    uint32_t d;
    if (c >= '0' && c <= '9') {
      d = static_cast<uint32_t>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      d = static_cast<uint32_t>(c - 'a' + 10);
    } else if (c >= 'A' && c <= 'F') {
      d = static_cast<uint32_t>(c - 'A' + 10);
    } else {
      return std::nullopt;
    }
    value = value * 16 + d;  // at most 8 digits: fits
  }
  return value;
}

std::string_view XidTrim(std::string_view text) {
  while (!text.empty() && XidIsBlank(text.front())) text.remove_prefix(1);
  while (!text.empty() && XidIsBlank(text.back())) text.remove_suffix(1);
  return text;
}

struct XidKmsgHeader {
  int priority = 0;
  uint64_t seq = 0;
  int64_t usec = 0;
};

// A /dev/kmsg record's "PRIORITY,SEQ,USEC,FLAGS[,FIELD...];" taken off the
// front of `text`; `text` is left alone when it is not one.
std::optional<XidKmsgHeader> XidTakeKmsgHeader(std::string_view& text) {
  std::string_view rest = text;
  XidKmsgHeader header;
  auto priority = XidDecimal<int>(XidTakeDigits(rest));
  if (!priority || !XidConsume(rest, ",")) return std::nullopt;
  auto seq = XidDecimal<uint64_t>(XidTakeDigits(rest));
  if (!seq || !XidConsume(rest, ",")) return std::nullopt;
  auto usec = XidDecimal<int64_t>(XidTakeDigits(rest));
  if (!usec || !XidConsume(rest, ",")) return std::nullopt;
  size_t semi = rest.substr(0, kXidMaxKmsgFieldBytes + 1).find(';');
  if (semi == std::string_view::npos || semi == 0) return std::nullopt;
  for (char c : rest.substr(0, semi)) {
    if (XidIsBlank(c)) return std::nullopt;
  }
  rest.remove_prefix(semi + 1);
  header.priority = *priority;
  header.seq = *seq;
  header.usec = *usec;
  text = rest;
  return header;
}

// Takes a text log's prefix off `text`: an optional syslog header ending in
// "kernel: ", then dmesg's bracketed stamps. True when nothing else stood
// before the Xid marker.
bool XidTakeTextPrefix(std::string_view& text) {
  size_t marker = text.find(kXidMarker);
  if (marker == std::string_view::npos) return false;
  std::string_view prefix = text.substr(0, marker);
  constexpr std::string_view kKernelTag = "kernel: ";
  if (size_t tag = prefix.rfind(kKernelTag); tag != std::string_view::npos) {
    if (tag != 0 && prefix[tag - 1] != ' ') return false;  // "notkernel: "
    prefix.remove_prefix(tag + kKernelTag.size());
  }
  while (!prefix.empty()) {
    if (prefix.front() != '[') return false;
    size_t close = prefix.substr(0, kXidMaxStampBytes).find(']');
    if (close == std::string_view::npos) return false;
    prefix.remove_prefix(close + 1);
    while (!prefix.empty() && prefix.front() == ' ') prefix.remove_prefix(1);
  }
  text.remove_prefix(marker);
  return true;
}

// "KEY=VALUE, " or a last "KEY=VALUE": the value, with `text` moved past it.
std::string_view XidTakeField(std::string_view& text) {
  size_t end = text.find(", ");
  std::string_view value = text.substr(0, end);
  text.remove_prefix(end == std::string_view::npos ? text.size() : end + 2);
  return value;
}

}  // namespace

std::optional<std::string> NormalizePciBusId(std::string_view id) {
  id = XidTrim(id);
  if (size_t dot = id.find('.'); dot != std::string_view::npos) {
    auto function = XidHex(id.substr(dot + 1), 1);
    if (!function || *function > 7) return std::nullopt;
    id = id.substr(0, dot);
  }
  size_t last = id.rfind(':');
  if (last == std::string_view::npos) return std::nullopt;
  std::string_view device_part = id.substr(last + 1);
  std::string_view head = id.substr(0, last);
  std::string_view bus_part = head;
  std::optional<uint32_t> domain = 0;
  if (size_t first = head.find(':'); first != std::string_view::npos) {
    domain = XidHex(head.substr(0, first), 8);
    bus_part = head.substr(first + 1);
  }
  auto bus = XidHex(bus_part, 2);
  auto device = XidHex(device_part, 2);
  if (!domain || !bus || !device || *device > 0x1f) return std::nullopt;
  char out[24];
  int n = std::snprintf(out, sizeof out, "%04x:%02x:%02x", *domain, *bus, *device);
  if (n <= 0 || static_cast<size_t>(n) >= sizeof out) return std::nullopt;
  return std::string(out, static_cast<size_t>(n));
}

std::optional<XidEvent> ParseXidLine(std::string_view line) {
  if (line.size() > kMaxXidLineBytes) return std::nullopt;
  XidEvent event;
  std::string_view rest = line;
  if (auto kmsg = XidTakeKmsgHeader(rest)) {
    // Facility 0 is the kernel's alone (see the header): a record user
    // space wrote is not the driver's report.
    if ((kmsg->priority >> 3) != 0) return std::nullopt;
    event.kmsg_seq = kmsg->seq;
    event.kmsg_usec = kmsg->usec;
    if (!rest.starts_with(kXidMarker)) return std::nullopt;
  } else if (!XidTakeTextPrefix(rest)) {
    return std::nullopt;
  }
  rest.remove_prefix(kXidMarker.size());

  XidConsume(rest, "PCI:");
  size_t id_end = rest.find_first_of(") ");
  if (id_end == std::string_view::npos) return std::nullopt;
  auto bus_id = NormalizePciBusId(rest.substr(0, id_end));
  if (!bus_id) return std::nullopt;
  rest.remove_prefix(id_end);
  if (rest.front() == ' ') {  // MIG tags up to the ')'
    size_t close = rest.substr(0, kXidMaxTagBytes + 1).find(')');
    if (close == std::string_view::npos) return std::nullopt;
    rest.remove_prefix(close);
  }
  if (!XidConsume(rest, "): ")) return std::nullopt;
  auto xid = XidDecimal<int>(XidTakeDigits(rest));
  if (!xid) return std::nullopt;
  event.pci_bus_id = std::move(*bus_id);
  event.xid = *xid;

  if (!rest.empty()) {
    if (!XidConsume(rest, ",")) return std::nullopt;  // "79x": not a Xid number
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    if (XidConsume(rest, "pid=")) event.pid = XidDecimal<int64_t>(XidTakeField(rest));
    if (XidConsume(rest, "name=")) event.process_name = SanitizeUtf8(XidTakeField(rest));
    event.message = SanitizeUtf8(XidTrim(rest));
  }
  return event;
}

}  // namespace gpuctl::health
