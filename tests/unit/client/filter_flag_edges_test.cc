// What a filter or limit flag does with a value that would match nothing or
// mean nothing: refused with exit 2 before any agent is asked, never read
// as "no filter" (every job, every kind, no time limit) or as "nothing
// happened".
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "client/exit_codes.h"
#include "common/event_kinds.h"
#include "tests/unit/client/cli_run.h"

namespace gpuctl::client {
namespace {

TEST(EventsKindFlag, AnUnknownKindIsRefusedNamingTheKnownOnes) {
  // "oom" for cuda_oom: silently keeping no event would read as "no OOMs".
  CliRun run = RunGpuctl({"events", "--kind", "oom"});
  EXPECT_EQ(run.code, kExitUsage) << run.err;
  EXPECT_NE(run.err.find("unknown kind 'oom'"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("cuda_oom"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("job_ended"), std::string::npos) << run.err;
  EXPECT_EQ(run.out, "");
}

TEST(EventsKindFlag, AKindAmongKnownOnesIsStillRefusedWhenOneIsUnknown) {
  CliRun run = RunGpuctl({"events", "--job", "w", "--kind", "cuda_oom,job_endd"});
  EXPECT_EQ(run.code, kExitUsage) << run.err;
  EXPECT_NE(run.err.find("unknown kind 'job_endd'"), std::string::npos) << run.err;
}

TEST(EventsKindFlag, SpacesAroundKindsAreAllowedAsStateAllowsThem) {
  // Accepted: the agent (absent here) is what fails, exit 3, not the flag.
  CliRun run = RunGpuctl({"events", "--kind", " cuda_oom , job_ended,,"});
  EXPECT_EQ(run.code, kExitUnreachable) << run.err;
  EXPECT_EQ(run.err.find("--kind"), std::string::npos) << run.err;
}

TEST(EventsKindFlag, EveryKindTheHeaderSpellsIsAccepted) {
  // A kind added to common/event_kinds.h but not to kAllKinds would be
  // refused by --kind: read the header's own spellings.
  std::ifstream in(std::string(GPUCTL_SOURCE_DIR) + "/common/event_kinds.h");
  std::stringstream text;
  text << in.rdbuf();
  const std::string header = text.str();
  std::set<std::string> spelled;
  const std::regex constant(R"re(inline constexpr char k\w+\[\] = "([a-z_]+)";)re");
  for (auto it = std::sregex_iterator(header.begin(), header.end(), constant); it != std::sregex_iterator(); ++it) {
    spelled.insert((*it)[1].str());
  }
  ASSERT_GT(spelled.size(), 20u) << "the header's constants were not found";
  std::set<std::string> listed(std::begin(event_kind::kAllKinds), std::end(event_kind::kAllKinds));
  EXPECT_EQ(listed, spelled);
}

TEST(EmptyFilterValues, AreRefusedNotReadAsNoFilter) {
  // `--state "$STATES"` with STATES unset lists nothing it was asked for;
  // `train wait --timeout "$T"` with T unset would wait for ever.
  const std::vector<std::vector<std::string>> commands = {
      {"events", "--kind", ""},       {"events", "--kind", " , "},         {"events", "--job", ""},
      {"train", "list", "--state", ""}, {"top", "--once", "--state", ""}, {"train", "wait", "w", "--timeout", ""},
  };
  for (const std::vector<std::string>& args : commands) {
    CliRun run = RunGpuctl(args);
    std::string line;
    for (const std::string& arg : args) line += " [" + arg + "]";
    EXPECT_EQ(run.code, kExitUsage) << line << ": " << run.err;
    EXPECT_EQ(run.out, "") << line;
  }
}

}  // namespace
}  // namespace gpuctl::client
