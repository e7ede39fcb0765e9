// Issue 24 item 4: `events --help` said the agent keeps "its last 1000" and
// that event numbers restart with each agent run, and the README's event
// transcripts showed a time the program does not print. The help and every
// `$ gpuctl events` transcript in the README now agree with the program.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>

#include "client/output/event_text.h"
#include "client/output/job_text.h"
#include "tests/unit/client/cli_run.h"

namespace gpuctl::client {
namespace {

// FormatLocalTimeMs's shape: 2026-12-05T00:39:00.175+00:00.
const std::regex kPrintedTime(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d)");

TEST(EventsHelpTruth, SaysWhatTheAgentServesAcrossRestartsAndThePrintedTimeFormat) {
  CliRun run = RunGpuctl({"events", "--help"});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(run.out.find("its last 1000"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("restart with each"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("after an agent restart too"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("STATE_DIR/events"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("rotates at 4 MiB"), std::string::npos) << run.out;
  std::smatch example;
  ASSERT_TRUE(std::regex_search(run.out, example, kPrintedTime)) << run.out;
  EXPECT_TRUE(std::regex_match(FormatLocalTimeMs(1796431140175), kPrintedTime)) << FormatLocalTimeMs(1796431140175);
}

TEST(EventsHelpTruth, TheReadmesEventTranscriptsShowThePrintedFormat) {
  std::ifstream in(std::string(GPUCTL_SOURCE_DIR) + "/README.md");
  ASSERT_TRUE(in.good());
  // Each line after "$ gpuctl events" up to the next "$ ", "# " or fence: the
  // time, the kind as AgentEventToText pads it (to 14, then one space), the rest.
  const std::regex line_shape(R"((\S+) ([a-z_]+)( +)(\S.*))");
  int transcripts = 0;
  int lines = 0;
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("$ gpuctl events", 0) == 0) {
      inside = true;
      ++transcripts;
      continue;
    }
    if (!inside) continue;
    if (line.rfind("$ ", 0) == 0 || line.rfind("```", 0) == 0 || line.rfind("# ", 0) == 0) {
      inside = false;
      continue;
    }
    ++lines;
    std::smatch m;
    if (std::regex_match(line, m, line_shape)) {
      const auto kind_and_pad = m[2].length() + m[3].length();
      EXPECT_TRUE(kind_and_pad == 15 || (m[2].length() >= 14 && m[3].length() == 1)) << line;
      EXPECT_TRUE(std::regex_match(m[1].str(), kPrintedTime)) << line;
    } else {
      ADD_FAILURE() << "not an event line: " << line;
    }
  }
  EXPECT_GE(transcripts, 4);
  EXPECT_GE(lines, 20);
}

// Issue 24 item 4: `train list --help` listed no KIND column. Its column list
// is now the table's own header.
TEST(TrainListHelpTruth, NamesEveryColumnTheTablePrints) {
  CliRun run = RunGpuctl({"train", "list", "--help"});
  ASSERT_EQ(run.code, 0) << run.err;
  std::string columns;
  for (const std::string& column : JobListHeader()) columns += (columns.empty() ? "" : " ") + column;
  EXPECT_NE(run.out.find("Columns: " + columns + "."), std::string::npos) << run.out;
  EXPECT_NE(columns.find(" KIND "), std::string::npos) << columns;
}

}  // namespace
}  // namespace gpuctl::client
