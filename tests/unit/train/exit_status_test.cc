#include "agents/train/exit_status.h"

#include <gtest/gtest.h>

namespace gpuctl::train {
namespace {

TEST(ParseExitStatusTest, OnlyWhatTheWrapperWrites) {
  EXPECT_EQ(ParseExitStatus("0\n"), 0);
  EXPECT_EQ(ParseExitStatus("137\n"), 137);
  EXPECT_EQ(ParseExitStatus("255"), 255);
  // Written over the wrapper's spare on a full disk: zero-padded to 10.
  EXPECT_EQ(ParseExitStatus("0000000007\n"), 7);
  EXPECT_EQ(ParseExitStatus("00000000007\n"), std::nullopt);
  for (std::string_view bad : {"", "\n", "0abc", "0abc\n", "256\n", "-1\n", "+1\n", " 1\n", "1 \n", "1\n\n", "0x1",
                               "9999", "1e2", "\x00\n"}) {
    EXPECT_EQ(ParseExitStatus(bad), std::nullopt) << bad;
  }
}

}  // namespace
}  // namespace gpuctl::train
