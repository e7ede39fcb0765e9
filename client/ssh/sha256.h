// SHA-256 as `sha256sum` prints it: bootstrap compares the local gpuctld
// with the remote one by digest instead of copying it every time.
#pragma once

#include <string>
#include <string_view>

namespace gpuctl::client::ssh {

// 64 lowercase hex digits.
std::string Sha256Hex(std::string_view bytes);

}  // namespace gpuctl::client::ssh
