// A job's files in STATE_DIR/jobs/NAME, which a restarted agent reads back
// (and which may have been edited or planted): job.json through
// JobRecordFromJson, and the exit_status file through ParseExitStatus.
// Invariants: an accepted record, written out and read back, is accepted
// again and writes out the same (what JobStore::Save then Load does); an
// exit status is 0-255.
#include <nlohmann/json.hpp>

#include "agents/train/exit_status.h"
#include "agents/train/job_record.h"
#include "common/json_text.h"
#include "tests/fuzz/fuzz_check.h"

using namespace gpuctl;
using namespace gpuctl::train;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = fuzz::AsText(data, size);
  if (std::optional<int> status = ParseExitStatus(text)) FUZZ_CHECK(*status >= 0 && *status <= 255);

  nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return 0;
  Result<JobRecord> record = JobRecordFromJson(doc);
  if (!record.ok()) return 0;
  std::string saved = DumpJson(ToJson(*record), 2);
  Result<JobRecord> reloaded = JobRecordFromJson(nlohmann::json::parse(saved));
  FUZZ_CHECK(reloaded.ok());
  FUZZ_CHECK(DumpJson(ToJson(*reloaded), 2) == saved);
  return 0;
}
