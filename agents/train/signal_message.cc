#include "agents/train/signal_message.h"

#include <limits>

#include "agents/train/log_line.h"

namespace gpuctl::train {
namespace {

struct SignalInfo {
  int number;
  std::string_view name;
  std::string_view description;  // as glibc's strsignal and bash print it
  bool alone_on_a_line;          // the shell prints it as a line of its own
};

// Linux numbering (x86, arm64). Pure data: the names are what logs say.
constexpr SignalInfo kSignals[] = {
    {1, "SIGHUP", "Hangup", false},
    {2, "SIGINT", "Interrupt", false},
    {3, "SIGQUIT", "Quit", false},
    {4, "SIGILL", "Illegal instruction", true},
    {5, "SIGTRAP", "Trace/breakpoint trap", false},
    {6, "SIGABRT", "Aborted", true},
    {7, "SIGBUS", "Bus error", true},
    {8, "SIGFPE", "Floating point exception", true},
    {9, "SIGKILL", "Killed", true},
    {10, "SIGUSR1", "User defined signal 1", false},
    {11, "SIGSEGV", "Segmentation fault", true},
    {12, "SIGUSR2", "User defined signal 2", false},
    {13, "SIGPIPE", "Broken pipe", false},
    {14, "SIGALRM", "Alarm clock", false},
    {15, "SIGTERM", "Terminated", true},
    {16, "SIGSTKFLT", "Stack fault", false},
    {24, "SIGXCPU", "CPU time limit exceeded", false},
    {25, "SIGXFSZ", "File size limit exceeded", false},
    {26, "SIGVTALRM", "Virtual timer expired", false},
    {27, "SIGPROF", "Profiling timer expired", false},
    {30, "SIGPWR", "Power failure", false},
    {31, "SIGSYS", "Bad system call", false},
};

constexpr int kMaxSignal = 64;  // SIGRTMAX on Linux

std::optional<LogEvent> SignalEvent(std::string_view text, uint64_t number,
                                    std::optional<int64_t> pid) {
  if (number == 0 || number > kMaxSignal) return std::nullopt;
  LogEvent event;
  event.kind = kSignal;
  event.message = CutUtf8(text, kMaxLogEventMessageBytes);
  event.signal_number = static_cast<int>(number);
  std::string_view name = SignalName(*event.signal_number);
  if (!name.empty()) event.signal_name = std::string(name);
  event.pid = pid;
  return event;
}

size_t SkipBlanks(std::string_view text, size_t pos) {
  while (pos < text.size() && text[pos] == ' ') ++pos;
  return pos;
}

// A signal as written after "signal": "9", "SIGKILL", "Signals.SIGKILL",
// "<Signals.SIGKILL: 9>" or a description ("Killed", "Bus error").
std::optional<uint64_t> SignalSpecAt(std::string_view text, size_t pos) {
  pos = SkipBlanks(text, pos);
  if (auto number = DigitsAt(text, pos)) return number;
  std::string_view rest = text.substr(pos);
  if (rest.starts_with("<")) rest.remove_prefix(1);
  if (rest.starts_with("Signals.")) rest.remove_prefix(8);
  for (const SignalInfo& s : kSignals) {
    if (rest.starts_with(s.name)) {
      // "SIGUSR1" must not be read as a longer name's prefix match the other way.
      char next = rest.size() > s.name.size() ? rest[s.name.size()] : ' ';
      if (!(next >= 'A' && next <= 'Z') && !(next >= '0' && next <= '9')) {
        return static_cast<uint64_t>(s.number);
      }
    }
    if (rest.starts_with(s.description)) return static_cast<uint64_t>(s.number);
  }
  return std::nullopt;
}

// The pid a line names: "(pid 1234)", "(pid: 1234)", "PID 1234", "Process 1234".
std::optional<int64_t> PidIn(std::string_view text) {
  for (std::string_view tag : {"(pid: ", "(pid ", "PID ", "Process "}) {
    size_t at = text.find(tag);
    if (at == std::string_view::npos) continue;
    auto pid = DigitsAt(text, at + tag.size());
    if (pid && *pid <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return static_cast<int64_t>(*pid);
    }
  }
  return std::nullopt;
}

// A launcher's summary of a child's return code, which Python (subprocess,
// multiprocessing) reports as minus the signal number: torchrun's
// "exitcode: -9" and "exitcode  : -9 (pid: 1234)", DeepSpeed's "exits with
// return code = -9", "returncode=-9", subprocess's "returned non-zero exit
// status -9". KEY [blanks] [':' | '='] [blanks] -DIGITS.
std::optional<uint64_t> NegativeExitCode(std::string_view text) {
  static constexpr std::string_view kKeys[] = {"exitcode", "return code", "returncode", "exit status",
                                               "exit code"};
  for (std::string_view key : kKeys) {
    for (size_t at = text.find(key); at != std::string_view::npos; at = text.find(key, at + 1)) {
      size_t pos = SkipBlanks(text, at + key.size());
      if (pos < text.size() && (text[pos] == ':' || text[pos] == '=')) pos = SkipBlanks(text, pos + 1);
      if (pos >= text.size() || text[pos] != '-') continue;
      auto number = DigitsAt(text, pos + 1);
      if (number && *number >= 1 && *number <= 64) return number;
    }
  }
  return std::nullopt;
}

// The shell's "Killed" (or another description) printed right after a
// progress bar that had no line end: "100%|█| 10/10 [00:01<00:00]Killed".
std::optional<LogEvent> GluedDescription(std::string_view text) {
  for (const SignalInfo& s : kSignals) {
    if (!s.alone_on_a_line || text.size() <= s.description.size() || !text.ends_with(s.description)) continue;
    char before = text[text.size() - s.description.size() - 1];
    // After a bar's closing ']' or '|', or a '%': never inside a word.
    if (before == ']' || before == '|' || before == '%') {
      return SignalEvent(text, static_cast<uint64_t>(s.number), std::nullopt);
    }
  }
  return std::nullopt;
}

// bash: "run.sh: line 3:  1234 Killed                  python train.py".
std::optional<LogEvent> ShellJobReport(std::string_view text) {
  size_t at = text.find(": line ");
  if (at == std::string_view::npos) return std::nullopt;
  size_t pos = 0;
  if (!DigitsAt(text, at + 7, &pos) || text.substr(pos, 2) != ": ") return std::nullopt;
  pos = SkipBlanks(text, pos + 2);
  auto pid = DigitsAt(text, pos, &pos);
  if (!pid || pos >= text.size() || text[pos] != ' ') return std::nullopt;
  std::string_view rest = text.substr(SkipBlanks(text, pos));
  for (const SignalInfo& s : kSignals) {
    if (rest.starts_with(s.description) &&
        (rest.size() == s.description.size() || rest[s.description.size()] == ' ')) {
      return SignalEvent(text, static_cast<uint64_t>(s.number), static_cast<int64_t>(*pid));
    }
  }
  return std::nullopt;
}

std::optional<LogEvent> WholeLine(std::string_view text) {
  if (text.starts_with("exit=")) {
    auto code = DigitsAt(text, 5);
    if (code && text.size() == 5 + std::to_string(*code).size() && *code > 128) {
      return SignalEvent(text, *code - 128, std::nullopt);
    }
    return std::nullopt;
  }
  constexpr std::string_view kCoreDumped = " (core dumped)";
  bool core_dumped = text.ends_with(kCoreDumped);
  std::string_view description = core_dumped ? text.substr(0, text.size() - kCoreDumped.size()) : text;
  for (const SignalInfo& s : kSignals) {
    if (description == s.description && (core_dumped || s.alone_on_a_line)) {
      return SignalEvent(text, static_cast<uint64_t>(s.number), std::nullopt);
    }
  }
  return std::nullopt;
}

}  // namespace

std::string_view SignalName(int number) {
  for (const SignalInfo& s : kSignals) {
    if (s.number == number) return s.name;
  }
  return {};
}

std::optional<LogEvent> ParseSignalMessage(std::string_view text) {
  text = TrimBlanks(text);
  if (text.size() <= 40) {
    if (auto event = WholeLine(text)) return event;
  }
  // Signal 9 (SIGKILL) received by PID 1234
  if (size_t at = text.find("Signal "); at != std::string_view::npos &&
                                         text.find(") received by PID ") != std::string_view::npos) {
    if (auto number = DigitsAt(text, at + 7)) return SignalEvent(text, *number, PidIn(text));
  }
  if (text.find("closing signal") != std::string_view::npos) return std::nullopt;
  if (size_t at = text.find("Received Signals."); at != std::string_view::npos) {
    if (auto number = SignalSpecAt(text, at + 9)) return SignalEvent(text, *number, std::nullopt);
  }
  for (std::string_view phrase : {"got signal", "killed by signal", "terminated with signal",
                                  "terminated by signal", "exited with signal", "exited due to signal"}) {
    size_t at = text.find(phrase);
    if (at == std::string_view::npos) continue;
    size_t pos = at + phrase.size();
    if (pos < text.size() && text[pos] == ':') ++pos;
    if (auto number = SignalSpecAt(text, pos)) return SignalEvent(text, *number, PidIn(text));
  }
  if (auto number = NegativeExitCode(text)) return SignalEvent(text, *number, PidIn(text));
  if (size_t at = text.find("Fatal Python error: "); at != std::string_view::npos) {
    if (auto number = SignalSpecAt(text, at + 20)) return SignalEvent(text, *number, std::nullopt);
  }
  if (auto event = ShellJobReport(text)) return event;
  return GluedDescription(text);
}

}  // namespace gpuctl::train
