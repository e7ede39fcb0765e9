#include "agents/provision/probe_lspci.h"

#include <cctype>

#include "agents/sys/text_fields.h"

namespace gpuctl::provision {
namespace {

using sys::Trim;

bool IsHex(std::string_view s, size_t length) {
  if (s.size() != length) return false;
  for (char c : s) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Removes trailing "( ... )" groups, returning the revision from "(rev xx)".
std::string_view StripTrailingParens(std::string_view rest, std::string& revision) {
  rest = Trim(rest);
  while (!rest.empty() && rest.back() == ')') {
    size_t open = rest.rfind('(');
    if (open == std::string_view::npos) break;
    std::string_view group = rest.substr(open + 1, rest.size() - open - 2);
    if (group.substr(0, 4) == "rev ") revision = std::string(Trim(group.substr(4)));
    rest = Trim(rest.substr(0, open));
  }
  return rest;
}

// "bb:dd.f" with hex bus and device, a decimal function.
bool IsBusDeviceFunction(std::string_view s) {
  return s.size() == 7 && IsHex(s.substr(0, 2), 2) && s[2] == ':' && IsHex(s.substr(3, 2), 2) && s[5] == '.' &&
         s[6] >= '0' && s[6] <= '7';
}

}  // namespace

std::optional<PciDevice> ParseLspciLine(std::string_view line) {
  line = Trim(line);
  size_t space = line.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  PciDevice device;
  std::string_view address = line.substr(0, space);
  // "bb:dd.f" or "dddd:bb:dd.f"
  if (IsBusDeviceFunction(address)) {
    device.address = "0000:" + Lower(address);
  } else if (address.size() == 12 && IsHex(address.substr(0, 4), 4) && address[4] == ':' &&
             IsBusDeviceFunction(address.substr(5))) {
    device.address = Lower(address);
  } else {
    return std::nullopt;
  }

  std::string_view rest = line.substr(space + 1);
  size_t class_end = rest.find("]: ");
  if (class_end == std::string_view::npos) return std::nullopt;
  size_t class_open = rest.rfind('[', class_end);
  if (class_open == std::string_view::npos) return std::nullopt;
  std::string_view class_code = rest.substr(class_open + 1, class_end - class_open - 1);
  if (!IsHex(class_code, 4)) return std::nullopt;
  device.class_code = Lower(class_code);
  device.class_name = std::string(Trim(rest.substr(0, class_open)));

  rest = StripTrailingParens(rest.substr(class_end + 3), device.revision);
  if (rest.empty() || rest.back() != ']') return std::nullopt;
  size_t ids_open = rest.rfind('[');
  if (ids_open == std::string_view::npos) return std::nullopt;
  std::string_view ids = rest.substr(ids_open + 1, rest.size() - ids_open - 2);
  size_t colon = ids.find(':');
  if (colon == std::string_view::npos || !IsHex(ids.substr(0, colon), 4) || !IsHex(ids.substr(colon + 1), 4)) {
    return std::nullopt;
  }
  device.vendor_id = Lower(ids.substr(0, colon));
  device.device_id = Lower(ids.substr(colon + 1));
  device.name = std::string(Trim(rest.substr(0, ids_open)));
  return device;
}

std::vector<PciDevice> ParseLspciNvidiaGpus(std::string_view text) {
  std::vector<PciDevice> gpus;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    std::optional<PciDevice> device = ParseLspciLine(line);
    if (device && device->vendor_id == kNvidiaPciVendor && device->class_code.substr(0, 2) == "03") {
      gpus.push_back(std::move(*device));
    }
  }
  return gpus;
}

}  // namespace gpuctl::provision
