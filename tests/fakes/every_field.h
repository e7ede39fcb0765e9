// Field-by-field checks for the plain structs the agent saves and sends
// (job records, specs), so a round-trip test covers every field without
// listing them by hand in each assertion.
//
// GPUCTL_FIELDS(Type, a, b, c) lists Type's fields once, in declaration
// order, as a structured binding: the binding stops compiling when the
// struct gains or loses a field, so whoever adds one is sent here, and from
// here to the tests that must set it (ExpectEveryFieldSet fails for a field
// left at its default) and see it survive (ExpectSameFields).
#pragma once

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace gpuctl::testing {

template <typename T>
struct Fields;  // specialised by GPUCTL_FIELDS

// "a, b,  c" -> {"a", "b", "c"}.
inline std::vector<std::string> SplitFieldNames(std::string_view list) {
  std::vector<std::string> names;
  std::string current;
  for (char c : list) {
    if (c == ',') {
      names.push_back(current);
      current.clear();
    } else if (c != ' ' && c != '\n') {
      current += c;
    }
  }
  names.push_back(current);
  return names;
}

#define GPUCTL_FIELDS(Type, ...)                                                     \
  template <>                                                                        \
  struct Fields<Type> {                                                              \
    static std::vector<std::string> Names() { return SplitFieldNames(#__VA_ARGS__); } \
    static auto Of(const Type& whole_) {                                               \
      const auto& [__VA_ARGS__] = whole_;                                             \
      return std::tie(__VA_ARGS__);                                                  \
    }                                                                                \
  }

namespace every_field_detail {

template <typename T, size_t... I>
void ExpectSet(const T& value, const std::set<std::string>& except, const std::string& where,
               std::index_sequence<I...>) {
  const T defaults{};
  const auto got = Fields<T>::Of(value);
  const auto def = Fields<T>::Of(defaults);
  const std::vector<std::string> names = Fields<T>::Names();
  ASSERT_EQ(names.size(), sizeof...(I));
  (
      [&] {
        if (except.contains(names[I])) return;
        EXPECT_FALSE(std::get<I>(got) == std::get<I>(def))
            << where << "." << names[I] << " is left at its default: set it, so that the test covers it";
      }(),
      ...);
}

template <typename T, size_t... I>
void ExpectSame(const T& actual, const T& expected, const std::set<std::string>& except, const std::string& where,
                std::index_sequence<I...>) {
  const auto a = Fields<T>::Of(actual);
  const auto e = Fields<T>::Of(expected);
  const std::vector<std::string> names = Fields<T>::Names();
  ASSERT_EQ(names.size(), sizeof...(I));
  (
      [&] {
        if (except.contains(names[I])) return;
        EXPECT_TRUE(std::get<I>(a) == std::get<I>(e)) << where << "." << names[I] << " differs";
      }(),
      ...);
}

template <typename T>
constexpr size_t FieldCount() {
  return std::tuple_size_v<decltype(Fields<T>::Of(std::declval<const T&>()))>;
}

}  // namespace every_field_detail

// Fails once for each field of `value` that equals the same field of a
// default-constructed T, except those named in `except` (say why at the call).
template <typename T>
void ExpectEveryFieldSet(const T& value, const std::string& where, const std::set<std::string>& except = {}) {
  every_field_detail::ExpectSet(value, except, where,
                                std::make_index_sequence<every_field_detail::FieldCount<T>()>());
}

// Fails once for each field where `actual` and `expected` differ (by the
// field's operator==), naming it, except those named in `except`.
template <typename T>
void ExpectSameFields(const T& actual, const T& expected, const std::string& where,
                      const std::set<std::string>& except = {}) {
  every_field_detail::ExpectSame(actual, expected, except, where,
                                 std::make_index_sequence<every_field_detail::FieldCount<T>()>());
}

}  // namespace gpuctl::testing
