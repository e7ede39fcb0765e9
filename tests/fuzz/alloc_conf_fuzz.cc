// PYTORCH_CUDA_ALLOC_CONF as a user gives it to `gpuctl train start`:
// ValidateAllocConf over any text.
// Invariants: a refusal says something; an accepted conf is not blank.
#include "agents/sys/text_fields.h"
#include "agents/train/alloc_conf.h"
#include "tests/fuzz/fuzz_check.h"

using namespace gpuctl;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view conf = fuzz::AsText(data, size);
  Status status = train::ValidateAllocConf(conf);
  if (status.ok()) {
    FUZZ_CHECK(!sys::Trim(conf).empty());
  } else {
    FUZZ_CHECK(!status.message().empty());
  }
  return 0;
}
