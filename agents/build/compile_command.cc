#include "agents/build/compile_command.h"

#include <algorithm>
#include <array>
#include <set>

#include "agents/sys/text_fields.h"

namespace gpuctl::build {
namespace {

bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

bool IsSourceFile(std::string_view arg) {
  static constexpr std::array<std::string_view, 7> kExtensions = {".cu", ".cpp", ".cc", ".cxx", ".c", ".C", ".c++"};
  return std::any_of(kExtensions.begin(), kExtensions.end(),
                     [&](std::string_view ext) { return arg.size() > ext.size() && EndsWith(arg, ext); });
}

// "--threads=4" or "--threads" "4": the value, or empty when `arg` is not `name`.
bool TakeValue(const std::vector<std::string>& argv, size_t& i, std::initializer_list<std::string_view> names,
               std::string& value) {
  std::string_view arg = argv[i];
  for (std::string_view name : names) {
    if (arg == name && i + 1 < argv.size()) {
      value = argv[++i];
      return true;
    }
    if (arg.size() > name.size() && arg.substr(0, name.size()) == name && arg[name.size()] == '=') {
      value = std::string(arg.substr(name.size() + 1));
      return true;
    }
  }
  return false;
}

// "arch=compute_90,code=[sm_90,compute_90]" -> its arch part ("compute_90"):
// one target per gencode whatever its code list.
std::string GencodeTarget(std::string_view value) {
  size_t arch = value.find("arch=");
  if (arch == std::string_view::npos) return std::string(value);
  std::string_view rest = value.substr(arch + 5);
  return std::string(rest.substr(0, rest.find(',')));
}

}  // namespace

bool IsCompilerName(std::string_view comm) {
  static constexpr std::array<std::string_view, 22> kNames = {
      "nvcc",  "cicc",    "ptxas",   "nvlink",  "fatbinary", "cudafe++", "gcc",    "g++",
      "cc",    "c++",     "cc1",     "cc1plus", "clang",     "clang++",  "ld",     "ld.bfd",
      "ld.gold", "ld.lld", "lld",    "collect2", "x86_64-linux-gn", "aarch64-linux-g"};
  return std::find(kNames.begin(), kNames.end(), comm) != kNames.end();
}

CompileCommand ParseCompileCommand(const std::vector<std::string>& argv) {
  CompileCommand command;
  std::set<std::string> targets;
  bool arch_alone = false, arch_unknown = false;
  for (size_t i = 1; i < argv.size(); ++i) {
    std::string value;
    if (TakeValue(argv, i, {"-gencode", "--generate-code"}, value)) {
      targets.insert(GencodeTarget(value));
    } else if (TakeValue(argv, i, {"-arch", "--gpu-architecture"}, value)) {
      if (value.rfind("all", 0) == 0 || value == "native") arch_unknown = true;
      arch_alone = true;
    } else if (TakeValue(argv, i, {"--threads", "-t"}, value)) {
      auto threads = sys::ToNumber<uint32_t>(value);
      if (threads) command.threads = *threads;
    } else if (TakeValue(argv, i, {"-o", "--output-file", "-MF", "-MT", "-MQ", "-include", "-x"}, value)) {
      // An option's operand is not the source, even when it ends in .c.
    } else if (argv[i].empty() || argv[i][0] != '-') {
      if (IsSourceFile(argv[i])) command.source = argv[i];
    }
  }
  if (!targets.empty()) {
    command.archs = static_cast<uint32_t>(targets.size());
  } else if (arch_alone && !arch_unknown) {
    command.archs = 1;
  }
  if (command.threads == 0) command.threads = std::max<uint32_t>(command.archs, 1);
  return command;
}

}  // namespace gpuctl::build
