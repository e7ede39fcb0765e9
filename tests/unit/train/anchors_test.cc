#include "agents/train/anchors.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gpuctl::train {
namespace {

using Argv = std::vector<std::string>;

TEST(ParseAnchors, AcceptsPositiveWholeNumbers) {
  EXPECT_EQ(*ParseAnchors("1"), 1u);
  EXPECT_EQ(*ParseAnchors("1024"), 1024u);
  EXPECT_EQ(*ParseAnchors("18446744073709551615"), 18446744073709551615ull);
}

TEST(ParseAnchors, RefusesWithAReason) {
  EXPECT_EQ(ParseAnchors("0").status().message(),
            "invalid anchor count '0': it must be above 0 (e.g. 1024)");
  EXPECT_EQ(ParseAnchors("-5").status().message(),
            "invalid anchor count '-5': give a whole number above 0, in digits only (e.g. 1024)");
  EXPECT_EQ(ParseAnchors("18446744073709551616").status().message(),
            "invalid anchor count '18446744073709551616': it is too large (e.g. 1024)");
  for (const char* bad : {"", "1.5", "1e3", "1k", " 1024", "1024 ", "abc", "+5", "0x10"}) {
    auto r = ParseAnchors(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument) << bad;
    EXPECT_NE(r.status().message().find("e.g. 1024"), std::string::npos) << bad;
  }
}

TEST(ApplyAnchorsFlag, AppendsWhenAbsent) {
  EXPECT_EQ(ApplyAnchorsFlag({"python", "train.py", "--lr", "3e-4"}, 512),
            (Argv{"python", "train.py", "--lr", "3e-4", "--max-anchors", "512"}));
  EXPECT_EQ(ApplyAnchorsFlag({"python"}, 7), (Argv{"python", "--max-anchors", "7"}));
}

TEST(ApplyAnchorsFlag, ReplacesTheSeparateFormInPlace) {
  EXPECT_EQ(ApplyAnchorsFlag({"python", "train.py", "--max-anchors", "1024", "--lr", "1"}, 512),
            (Argv{"python", "train.py", "--max-anchors", "512", "--lr", "1"}));
}

TEST(ApplyAnchorsFlag, ReplacesTheJoinedFormInPlace) {
  EXPECT_EQ(ApplyAnchorsFlag({"python", "train.py", "--max-anchors=1024", "--lr", "1"}, 512),
            (Argv{"python", "train.py", "--max-anchors=512", "--lr", "1"}));
}

TEST(ApplyAnchorsFlag, CollapsesRepeatsToTheFirst) {
  EXPECT_EQ(ApplyAnchorsFlag({"torchrun", "train.py", "--max-anchors", "1", "--lr", "1",
                              "--max-anchors=2", "--max-anchors", "3"},
                             64),
            (Argv{"torchrun", "train.py", "--max-anchors", "64", "--lr", "1"}));
  EXPECT_EQ(ApplyAnchorsFlag({"p", "--max-anchors=1", "--max-anchors", "2", "x"}, 64),
            (Argv{"p", "--max-anchors=64", "x"}));
}

TEST(ApplyAnchorsFlag, FlagWithoutValueGetsOne) {
  EXPECT_EQ(ApplyAnchorsFlag({"p", "--max-anchors"}, 8), (Argv{"p", "--max-anchors", "8"}));
  EXPECT_EQ(ApplyAnchorsFlag({"p", "--max-anchors", "--lr", "1"}, 8),
            (Argv{"p", "--max-anchors", "8", "--lr", "1"}));
  // A negative number is a (wrong) value, not an option: it is replaced.
  EXPECT_EQ(ApplyAnchorsFlag({"p", "--max-anchors", "-3"}, 8), (Argv{"p", "--max-anchors", "8"}));
}

TEST(ApplyAnchorsFlag, LeavesLookalikesAndTheProgramAlone) {
  EXPECT_EQ(ApplyAnchorsFlag({"p", "--max-anchors-per-image=3", "--max-anchors2", "4"}, 8),
            (Argv{"p", "--max-anchors-per-image=3", "--max-anchors2", "4", "--max-anchors", "8"}));
  EXPECT_EQ(ApplyAnchorsFlag({"--max-anchors", "x"}, 8),
            (Argv{"--max-anchors", "x", "--max-anchors", "8"}));
}

TEST(ApplyAnchorsFlag, OtherFlagNames) {
  EXPECT_EQ(ApplyAnchorsFlag({"p", "--anchors=5"}, 9, "--anchors"), (Argv{"p", "--anchors=9"}));
  EXPECT_EQ(ApplyAnchorsFlag({"p", "-a", "5"}, 9, "-a"), (Argv{"p", "-a", "9"}));
  EXPECT_EQ(ApplyAnchorsFlag({"p", "x"}, 9, ""), (Argv{"p", "x"}));
}

}  // namespace
}  // namespace gpuctl::train
