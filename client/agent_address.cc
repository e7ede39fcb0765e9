#include "client/agent_address.h"

namespace gpuctl::client {

std::string ChooseAgentAddress(const std::string& flag_value, const std::string& env_value) {
  if (!flag_value.empty()) return flag_value;
  if (!env_value.empty()) return env_value;
  return kDefaultAgentAddress;
}

bool IsUnixSocketAddress(const std::string& address) {
  return address.rfind("unix:", 0) == 0 || address.rfind('/', 0) == 0;
}

Result<std::string> NormalizeAgentAddress(const std::string& address) {
  if (address.rfind("unix:", 0) == 0) {
    if (address.size() > 5 && address[5] == '/') return address;
    return InvalidArgument("agent address '" + address + "': a unix socket needs an absolute path, e.g. unix:/run/gpuctl/gpuctld.sock");
  }
  if (!address.empty() && address.front() == '/') return "unix:" + address;
  size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == address.size() ||
      address.find_first_not_of("0123456789", colon + 1) != std::string::npos) {
    return InvalidArgument("agent address '" + address +
                           "' is neither unix:PATH nor HOST:PORT (e.g. unix:/run/gpuctl/gpuctld.sock, 127.0.0.1:50051)");
  }
  return address;
}

}  // namespace gpuctl::client
