// Names to literal addresses. The agent decides what it binds by the
// addresses a name resolves to, never by the name: "localhost" may resolve
// anywhere /etc/hosts says.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace gpuctl::sys {

// The numeric addresses (IPv4 dotted, IPv6 without brackets) that `host`
// resolves to, without duplicates, in resolver order. A literal address is
// returned as it is, without a lookup. Errors: kNotFound naming the host.
Result<std::vector<std::string>> ResolveToLiterals(const std::string& host);

}  // namespace gpuctl::sys
