// The text rules of tmux 3.3a, as literals. That tmux itself reads them so
// is checked in tests/integration/tmux_test.cc.
#include "agents/sys/tmux_text.h"

#include <gtest/gtest.h>

namespace gpuctl::sys {
namespace {

TEST(TmuxText, ClassifiesWhatTmuxPrints) {
  // Exactly as tmux 3.3a prints them (client.c, cmd-find.c, cmd-new-session.c).
  EXPECT_EQ(ClassifyTmuxError("server exited unexpectedly\n"), TmuxFailure::kNoServer);
  EXPECT_EQ(ClassifyTmuxError("server exited\n"), TmuxFailure::kNoServer);
  EXPECT_EQ(ClassifyTmuxError("lost server\n"), TmuxFailure::kNoServer);
  EXPECT_EQ(ClassifyTmuxError("no server running on /tmp/tmux-0/gpuctl\n"), TmuxFailure::kNoServer);
  EXPECT_EQ(ClassifyTmuxError("error connecting to /tmp/tmux-0/gpuctl (Connection refused)\n"), TmuxFailure::kNoServer);
  EXPECT_EQ(ClassifyTmuxError("error connecting to /tmp/tmux-0/gpuctl (No such file or directory)\n"),
            TmuxFailure::kNoServer);
  EXPECT_EQ(ClassifyTmuxError("error connecting to /tmp/tmux-0/gpuctl (Permission denied)\n"), TmuxFailure::kOther);
  EXPECT_EQ(ClassifyTmuxError("can't find session: job1\n"), TmuxFailure::kNoSuchSession);
  // A server kept with no session at all (exit-empty off), as tmux 3.3a says it.
  EXPECT_EQ(ClassifyTmuxError("no current target\n"), TmuxFailure::kNoSuchSession);
  EXPECT_EQ(ClassifyTmuxError("no such session: =job1\n"), TmuxFailure::kNoSuchSession);
  EXPECT_EQ(ClassifyTmuxError("duplicate session: job1\n"), TmuxFailure::kDuplicate);
  EXPECT_EQ(ClassifyTmuxError("unknown command: b;\n"), TmuxFailure::kOther);
  EXPECT_EQ(ClassifyTmuxError(""), TmuxFailure::kOther);
}

TEST(TmuxText, AFinalSemicolonIsEscaped) {
  EXPECT_EQ(TmuxLiteralArgument("plain"), "plain");
  EXPECT_EQ(TmuxLiteralArgument(""), "");
  EXPECT_EQ(TmuxLiteralArgument(";"), "\\;");
  EXPECT_EQ(TmuxLiteralArgument("a;"), "a\\;");
  EXPECT_EQ(TmuxLiteralArgument("a\\;"), "a\\\\;");  // tmux gives back "a\;"
  EXPECT_EQ(TmuxLiteralArgument(";;"), ";\\;");
  EXPECT_EQ(TmuxLiteralArgument("a;b"), "a;b");  // only the last character counts
}

TEST(TmuxText, AFormatArgumentDoublesHashes) {
  EXPECT_EQ(TmuxLiteralFormatArgument("/data/run#S"), "/data/run##S");
  EXPECT_EQ(TmuxLiteralFormatArgument("/d/#(id)#{x}"), "/d/##(id)##{x}");
  EXPECT_EQ(TmuxLiteralFormatArgument("/d/x#;"), "/d/x##\\;");
  EXPECT_EQ(TmuxLiteralFormatArgument("/plain"), "/plain");
}

}  // namespace
}  // namespace gpuctl::sys
