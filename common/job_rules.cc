#include "common/job_rules.h"

#include <algorithm>
#include <charconv>
#include <string>

namespace gpuctl {
namespace {

std::string Quoted(std::string_view text) { return "'" + std::string(text) + "'"; }

}  // namespace

bool IsEnvKey(std::string_view key) {
  if (key.empty() || (key[0] >= '0' && key[0] <= '9')) return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

std::optional<uint64_t> ParseWholeNumber(std::string_view text) {
  if (text.empty() || !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

Result<uint64_t> ParseAnchors(std::string_view text) {
  std::optional<uint64_t> value = ParseWholeNumber(text);
  if (value && *value > 0) return *value;
  std::string why = "give a whole number above 0, in digits only";
  bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string_view::npos;
  if (digits && !value) why = "it is too large";
  if (value && *value == 0) why = "it must be above 0";
  return InvalidArgument("invalid anchor count " + Quoted(text) + ": " + why + " (e.g. 1024)");
}

Result<uint64_t> ParseAnchorsFlag(std::string_view text) {
  std::optional<uint64_t> value = ParseWholeNumber(text);
  if (!value || *value == 0) {
    return InvalidArgument("--anchors must be a positive integer (e.g. --anchors 1024), got " + Quoted(text));
  }
  return *value;
}

Result<uint32_t> ParseOomRetriesFlag(std::string_view text) {
  std::optional<uint64_t> value = ParseWholeNumber(text);
  if (!value || *value > kMaxOomRetries) {
    return InvalidArgument("--oom-retries must be a whole number from 0 to " + std::to_string(kMaxOomRetries) +
                           ", got " + Quoted(text));
  }
  return static_cast<uint32_t>(*value);
}

Result<uint32_t> ParseNumGpusFlag(std::string_view text) {
  std::optional<uint64_t> value = ParseWholeNumber(text);
  if (!value || *value == 0 || *value > kMaxNumGpus) {
    return InvalidArgument("--num-gpus must be a whole number from 1 to " + std::to_string(kMaxNumGpus) + ", got " +
                           Quoted(text));
  }
  return static_cast<uint32_t>(*value);
}

Result<int32_t> ParsePriorityFlag(std::string_view text) {
  bool negative = !text.empty() && text.front() == '-';
  bool signed_text = !text.empty() && (negative || text.front() == '+');  // "+5" as strtol read it
  std::optional<uint64_t> magnitude = ParseWholeNumber(signed_text ? text.substr(1) : text);
  if (!magnitude || *magnitude > uint64_t{1000000}) magnitude.reset();
  int64_t value = magnitude ? (negative ? -static_cast<int64_t>(*magnitude) : static_cast<int64_t>(*magnitude)) : 0;
  if (!magnitude || value < kMinPriority || value > kMaxPriority) {
    return InvalidArgument("--priority must be a whole number from " + std::to_string(kMinPriority) + " to " +
                           std::to_string(kMaxPriority) + ", got " + Quoted(text));
  }
  return static_cast<int32_t>(value);
}

Result<OnOom> ParseOnOom(std::string_view text) {
  if (text.empty() || text == "fail") return OnOom::kFail;
  if (text == "recover") return OnOom::kRecover;
  return InvalidArgument("--on-oom must be fail or recover, got " + Quoted(text));
}

const char* OnOomName(OnOom policy) { return policy == OnOom::kRecover ? "recover" : "fail"; }

Result<OnHang> ParseOnHang(std::string_view text) {
  if (text.empty() || text == "dump") return OnHang::kDump;
  if (text == "fail") return OnHang::kFail;
  if (text == "recover") return OnHang::kRecover;
  return InvalidArgument("--on-hang must be dump, fail or recover, got " + Quoted(text));
}

const char* OnHangName(OnHang policy) {
  switch (policy) {
    case OnHang::kFail: return "fail";
    case OnHang::kRecover: return "recover";
    case OnHang::kDump: break;
  }
  return "dump";
}

Result<OnFail> ParseOnFail(std::string_view text) {
  if (text.empty() || text == "fail") return OnFail::kFail;
  if (text == "recover") return OnFail::kRecover;
  return InvalidArgument("--on-fail must be fail or recover, got " + Quoted(text));
}

const char* OnFailName(OnFail policy) { return policy == OnFail::kRecover ? "recover" : "fail"; }

Status CheckResumeArg(std::string_view text) {
  if (text.find(kCheckpointPlaceholder) != std::string_view::npos) return Status::Ok();
  return InvalidArgument("--resume-arg must name {checkpoint}, where the checkpoint's path goes, e.g. "
                         "--resume-arg '--resume_from_checkpoint={checkpoint}'; got " + Quoted(text));
}

Status CheckOomRetries(uint32_t retries) {
  if (retries <= kMaxOomRetries) return Status::Ok();
  return InvalidArgument("--oom-retries must be at most " + std::to_string(kMaxOomRetries));
}

Status CheckNumGpus(uint32_t num_gpus) {
  if (num_gpus <= kMaxNumGpus) return Status::Ok();
  return InvalidArgument("--num-gpus must be at most " + std::to_string(kMaxNumGpus));
}

}  // namespace gpuctl
