// Integers read back from JSON that gpuctl wrote but a person or a process
// may have edited since: job records, the event journal, the nodes file.
// nlohmann's get<int64_t>() converts any JSON number, and a double out of
// the integer's range (1e300) is undefined behaviour; -1 read as uint32_t
// silently wraps. JsonInteger takes only an integer its type can hold.
#pragma once

#include <concepts>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

namespace gpuctl {

// `j` as a T when it is a JSON integer within T's range. Anything else
// (1.5, 1e300, -1 for an unsigned T, a string) throws
// nlohmann::json::type_error, as get<T>() does for a string, so the
// callers' handlers for malformed JSON cover it.
template <std::integral T>
  requires(!std::same_as<T, bool>)
T JsonInteger(const nlohmann::json& j) {
  if (j.is_number_unsigned()) {
    if (uint64_t v = j.get<uint64_t>(); std::in_range<T>(v)) return static_cast<T>(v);
  } else if (j.is_number_integer()) {
    if (int64_t v = j.get<int64_t>(); std::in_range<T>(v)) return static_cast<T>(v);
  }
  throw nlohmann::json::type_error::create(
      302,
      "expected an integer from " + std::to_string(std::numeric_limits<T>::min()) + " to " +
          std::to_string(std::numeric_limits<T>::max()) + ", got " +
          (j.is_number() ? j.dump() : std::string(j.type_name())),
      &j);
}

// `object[key]` as JsonInteger<T>, or `fallback` when the key is absent
// (what object.value(key, fallback) does, without its conversions).
template <std::integral T>
  requires(!std::same_as<T, bool>)
T JsonIntegerOr(const nlohmann::json& object, const char* key, T fallback) {
  if (!object.is_object()) {
    throw nlohmann::json::type_error::create(306, std::string("expected an object, got ") + object.type_name(),
                                             &object);
  }
  auto it = object.find(key);
  return it == object.end() ? fallback : JsonInteger<T>(*it);
}

}  // namespace gpuctl
