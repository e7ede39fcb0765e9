// The rules a job's spec follows, shared by the client (which refuses a typo
// before any connection) and the agent (which refuses what an older or other
// client sent): one rule and one default each, so both say the same thing and
// the help text quotes what the agent does. The job's name has its own header
// (common/job_name.h); sizes and durations are read by common/units.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "common/status.h"

namespace gpuctl {

// Defaults and limits of a job's spec.
inline constexpr std::string_view kDefaultAnchorsFlag = "--max-anchors";  // --anchors-flag
inline constexpr uint32_t kDefaultOomRetries = 3;      // --oom-retries unset
inline constexpr uint32_t kMaxOomRetries = 100;
inline constexpr double kDefaultOomKnobFactor = 0.75;  // --oom-knob FLAG without :FACTOR
inline constexpr uint64_t kDefaultOomKnobMin = 64;     // ... without :MIN
inline constexpr uint32_t kMaxNumGpus = 1024;          // --num-gpus
inline constexpr int32_t kMinPriority = -1000;         // --priority
inline constexpr int32_t kMaxPriority = 1000;
inline constexpr uint64_t kMinMemLimitBytes = uint64_t{16} << 20;  // --mem-limit

// An environment variable's name as the job may be given it (--env KEY=VALUE):
// letters, digits and '_', not empty, not starting with a digit.
bool IsEnvKey(std::string_view key);

// The one reading of a whole number the user typed: decimal digits only and
// within uint64_t ("0", "1024"; not "", "-5", "+3", "1.5", "1e3", " 1", "0x10",
// 2^64). nullopt otherwise.
std::optional<uint64_t> ParseWholeNumber(std::string_view text);

// A user-given anchor count: a whole number above 0 (ParseWholeNumber). The
// message says why ("it must be above 0", "it is too large").
Result<uint64_t> ParseAnchors(std::string_view text);

// The `gpuctl train start` flags as typed, each refused with kInvalidArgument
// naming the flag and its range:
Result<uint64_t> ParseAnchorsFlag(std::string_view text);     // --anchors: 1 and up
Result<uint32_t> ParseOomRetriesFlag(std::string_view text);  // --oom-retries: 0 to kMaxOomRetries
Result<uint32_t> ParseNumGpusFlag(std::string_view text);     // --num-gpus: 1 to kMaxNumGpus
Result<int32_t> ParsePriorityFlag(std::string_view text);     // --priority: kMinPriority to kMaxPriority, signed

// --on-oom: what a run that dies of CUDA OOM gets.
enum class OnOom { kFail, kRecover };
// "fail" or "recover" (case-sensitive); "" is kFail (not given). Else
// kInvalidArgument "--on-oom must be fail or recover, got 'X'".
Result<OnOom> ParseOnOom(std::string_view text);
const char* OnOomName(OnOom policy);  // "fail", "recover"

// --on-hang: what a run that stops making progress gets (hang_watch.h):
// a dump of its stacks and nothing else, a dump and a stop (failed), or a
// dump, a stop and a relaunch from its last complete checkpoint.
enum class OnHang { kDump, kFail, kRecover };
// "dump", "fail" or "recover"; "" is kDump (not given).
Result<OnHang> ParseOnHang(std::string_view text);
const char* OnHangName(OnHang policy);

// --on-fail: what a run that fails any other way (not an OOM the OOM policy
// takes, not a stop, not a hang) gets: left failed, or relaunched from its
// last complete checkpoint.
enum class OnFail { kFail, kRecover };
// "fail" or "recover"; "" is kFail.
Result<OnFail> ParseOnFail(std::string_view text);
const char* OnFailName(OnFail policy);

// Hang detection and relaunches from checkpoints.
inline constexpr int64_t kDefaultStartTimeoutMs = 30 * 60 * 1000;  // --start-timeout
inline constexpr int64_t kMinHangAfterMs = 1000;                   // --hang-after, --start-timeout
inline constexpr uint32_t kDefaultMaxRestartsWithoutProgress = 2;  // --max-restarts-without-progress
inline constexpr uint32_t kMaxRestartsWithoutProgress = 100;
// The text of --resume-arg that is replaced by the checkpoint's path.
inline constexpr std::string_view kCheckpointPlaceholder = "{checkpoint}";
// --resume-arg: non-empty and naming {checkpoint}.
Status CheckResumeArg(std::string_view text);

// The typed values' checks, for what arrives over the wire from any client.
Status CheckOomRetries(uint32_t retries);  // at most kMaxOomRetries
Status CheckNumGpus(uint32_t num_gpus);    // at most kMaxNumGpus (0: not asked)

}  // namespace gpuctl
