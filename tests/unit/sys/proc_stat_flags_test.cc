// Field 9 of /proc/PID/stat (flags): the guard tells kernel threads
// (PF_KTHREAD) from processes by it, so it is read after the LAST ')' like
// every field after comm.
#include <gtest/gtest.h>

#include "agents/sys/proc_stat.h"

namespace gpuctl::sys {
namespace {

// The rest of a stat line after field 9: fields 10 to 24.
constexpr const char* kTail = " 0 0 0 0 7 3 0 0 20 0 1 0 953064 3133440 418";

TEST(ParseProcStatFlags, ReadsField9AfterTheLastParenthesis) {
  auto kthreadd = ParseProcStat(std::string("2 (kthreadd) S 0 0 0 0 -1 2129984") + kTail);
  ASSERT_TRUE(kthreadd.ok()) << kthreadd.status().ToString();
  EXPECT_EQ(kthreadd->flags, 2129984u);
  auto odd_name = ParseProcStat(std::string("77 (a) b) (c) R 1 77 77 0 -1 4194560") + kTail);
  ASSERT_TRUE(odd_name.ok()) << odd_name.status().ToString();
  EXPECT_EQ(odd_name->flags, 4194560u);
}

TEST(ParseProcStatFlags, RefusesAMissingOrNonNumericFlagsField) {
  EXPECT_FALSE(ParseProcStat("77 (x) R 1 77").ok());
  EXPECT_FALSE(ParseProcStat("no comm here").ok());
  EXPECT_FALSE(ParseProcStat(std::string("7 (x) R 1 7 7 0 -1 flags") + kTail).ok());
}

}  // namespace
}  // namespace gpuctl::sys
