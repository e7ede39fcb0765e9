#include "agents/sys/resolve.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>

namespace gpuctl::sys {

Result<std::vector<std::string>> ResolveToLiterals(const std::string& host) {
  in6_addr any{};
  if (inet_pton(AF_INET, host.c_str(), &any) == 1 || inet_pton(AF_INET6, host.c_str(), &any) == 1) {
    return std::vector<std::string>{host};
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &found);
  if (rc != 0) return NotFound("cannot resolve '" + host + "': " + ::gai_strerror(rc));
  std::vector<std::string> literals;
  for (addrinfo* at = found; at != nullptr; at = at->ai_next) {
    char text[INET6_ADDRSTRLEN] = {};
    const void* raw = at->ai_family == AF_INET
                          ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(at->ai_addr)->sin_addr)
                          : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(at->ai_addr)->sin6_addr);
    if ((at->ai_family != AF_INET && at->ai_family != AF_INET6) ||
        inet_ntop(at->ai_family, raw, text, sizeof text) == nullptr) {
      continue;
    }
    if (std::find(literals.begin(), literals.end(), text) == literals.end()) literals.emplace_back(text);
  }
  ::freeaddrinfo(found);
  if (literals.empty()) return NotFound("'" + host + "' resolves to no IPv4 or IPv6 address");
  return literals;
}

}  // namespace gpuctl::sys
