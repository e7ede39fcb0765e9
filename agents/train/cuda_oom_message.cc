#include "agents/train/cuda_oom_message.h"

#include <limits>

#include "agents/train/log_line.h"
#include "common/units.h"

namespace gpuctl::train {
namespace {

constexpr std::string_view kOomPhrase = "CUDA out of memory";
constexpr std::string_view kRuntimeOomPhrase = "CUDA error: out of memory";

bool IsLetter(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
bool IsNumberChar(char c) { return (c >= '0' && c <= '9') || c == '.'; }

// "<number>[ ]<unit>" as PyTorch's format_size prints it. `begin`/`end` bound
// the candidate; a unit must be there, so a number cut off before its unit is
// not read as bytes.
std::optional<uint64_t> SizeIn(std::string_view text, size_t begin, size_t number_end,
                               size_t unit_begin, size_t unit_end) {
  if (number_end == begin || unit_end == unit_begin) return std::nullopt;
  if (text.substr(begin, number_end - begin).find_first_of("0123456789") == std::string_view::npos) {
    return std::nullopt;
  }
  Result<uint64_t> bytes = ParseByteSize(text.substr(begin, unit_end - begin));
  if (!bytes.ok()) return std::nullopt;
  return *bytes;
}

// The size that starts at text[pos]. It must be followed by something (a
// blank, '.', ';'): at the very end of the text the unit may be cut short.
std::optional<uint64_t> SizeStartingAt(std::string_view text, size_t pos) {
  size_t i = pos;
  while (i < text.size() && IsNumberChar(text[i])) ++i;
  size_t number_end = i;
  if (i < text.size() && text[i] == ' ') ++i;
  size_t unit_begin = i;
  while (i < text.size() && IsLetter(text[i])) ++i;
  if (i >= text.size()) return std::nullopt;
  return SizeIn(text, pos, number_end, unit_begin, i);
}

// The size that ends right before text[pos].
std::optional<uint64_t> SizeEndingAt(std::string_view text, size_t pos) {
  size_t i = pos;
  while (i > 0 && IsLetter(text[i - 1])) --i;
  size_t unit_begin = i;
  if (i > 0 && text[i - 1] == ' ') --i;
  size_t number_end = i;
  while (i > 0 && IsNumberChar(text[i - 1])) --i;
  return SizeIn(text, i, number_end, unit_begin, pos);
}

std::optional<uint64_t> SizeAfter(std::string_view text, std::string_view phrase) {
  size_t at = text.find(phrase);
  if (at == std::string_view::npos) return std::nullopt;
  return SizeStartingAt(text, at + phrase.size());
}

std::optional<uint64_t> SizeBefore(std::string_view text, std::string_view phrase) {
  size_t at = text.find(phrase);
  if (at == std::string_view::npos) return std::nullopt;
  return SizeEndingAt(text, at);
}

std::optional<int> GpuIndex(std::string_view text) {
  for (size_t at = text.find("GPU "); at != std::string_view::npos; at = text.find("GPU ", at + 1)) {
    auto index = DigitsAt(text, at + 4);
    if (index && *index <= static_cast<uint64_t>(std::numeric_limits<int>::max())) {
      return static_cast<int>(*index);
    }
  }
  return std::nullopt;
}

// "Process 1234 has 1.00 GiB memory in use." for every other process.
void ReadOtherProcesses(std::string_view text, LogEvent& event) {
  constexpr std::string_view kProcess = "Process ";
  constexpr std::string_view kHas = " has ";
  for (size_t at = text.find(kProcess); at != std::string_view::npos;
       at = text.find(kProcess, at + 1)) {
    size_t end = 0;
    auto pid = DigitsAt(text, at + kProcess.size(), &end);
    if (!pid || text.substr(end, kHas.size()) != kHas) continue;
    auto bytes = SizeStartingAt(text, end + kHas.size());
    if (!bytes || *pid > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) continue;
    event.other_processes.push_back({static_cast<int64_t>(*pid), *bytes});
  }
}

void ReadCurrentWording(std::string_view text, LogEvent& event) {
  event.total_bytes = SizeAfter(text, "has a total capacity of ");
  if (!event.total_bytes) event.total_bytes = SizeAfter(text, "has a total capacty of ");
  event.free_bytes = SizeAfter(text, " of which ");
  event.in_use_bytes = SizeAfter(text, "this process has ");
  event.allocated_bytes = SizeAfter(text, "Of the allocated memory ");
  event.reserved_unallocated_bytes = SizeBefore(text, " is reserved by PyTorch");
  ReadOtherProcesses(text, event);
}

void ReadPre21Wording(std::string_view text, LogEvent& event) {
  event.total_bytes = SizeBefore(text, " total capacity");
  event.allocated_bytes = SizeBefore(text, " already allocated");
  event.free_bytes = SizeBefore(text, " free;");
  if (!event.free_bytes) event.free_bytes = SizeBefore(text, " free)");
  std::optional<uint64_t> reserved = SizeBefore(text, " reserved in total");
  if (!reserved) reserved = SizeBefore(text, " cached)");
  if (reserved && event.allocated_bytes && *reserved >= *event.allocated_bytes) {
    event.reserved_unallocated_bytes = *reserved - *event.allocated_bytes;
  }
}

// THC's "cuda runtime error (2) : out of memory" (PyTorch before 1.5): the
// error number in parentheses is cudaErrorMemoryAllocation's, 2.
size_t LegacyRuntimeOomAt(std::string_view text) {
  constexpr std::string_view kLead = "cuda runtime error (";
  constexpr std::string_view kTail = ") : out of memory";
  for (size_t at = text.find(kLead); at != std::string_view::npos; at = text.find(kLead, at + 1)) {
    size_t end = 0;
    auto code = DigitsAt(text, at + kLead.size(), &end);
    if (code && *code == 2 && text.substr(end, kTail.size()) == kTail) return at;
  }
  return std::string_view::npos;
}

}  // namespace

std::optional<LogEvent> ParseCudaOomMessage(std::string_view text) {
  size_t at = text.find(kOomPhrase);
  if (at == std::string_view::npos) at = text.find(kRuntimeOomPhrase);
  if (at == std::string_view::npos) at = LegacyRuntimeOomAt(text);
  if (at == std::string_view::npos) return std::nullopt;

  LogEvent event;
  event.kind = kCudaOom;
  event.message = CutUtf8(text, kMaxLogEventMessageBytes);
  std::string_view before = TrimBlanks(text.substr(0, at));
  if (before.ends_with(':') && IsDottedIdentifier(before.substr(0, before.size() - 1))) {
    event.exception_type = std::string(before.substr(0, before.size() - 1));
  }

  std::string_view rest = text.substr(at);
  event.tried_bytes = SizeAfter(rest, "Tried to allocate ");
  event.gpu = GpuIndex(rest);
  event.allowed_bytes = SizeBefore(rest, " allowed;");
  // Before 2.1 the figures sat in parentheses right after the request size.
  bool pre21 = rest.find(" (GPU ") != std::string_view::npos;
  if (pre21) ReadPre21Wording(rest, event);
  else ReadCurrentWording(rest, event);
  return event;
}

}  // namespace gpuctl::train
