#include <sstream>

#include "client/output/provision_output.h"
#include "client/output/table.h"
#include "common/utf8.h"

namespace gpuctl::client {
namespace {

// Arguments a shell would split or expand are single-quoted, so a planned
// command can be pasted as it is.
std::string Quote(const std::string& arg) {
  bool plain = !arg.empty() && arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                     "0123456789-_./=:,+@%") == std::string::npos;
  if (plain) return arg;
  std::string quoted = "'";
  for (char c : arg) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string CommandText(const v1::ProvisionCommand& command) {
  std::string text;
  // Sorted: the map's order on the wire is unspecified.
  std::map<std::string, std::string> env(command.env().begin(), command.env().end());
  for (const auto& [key, value] : env) text += key + "=" + Quote(value) + " ";
  for (int i = 0; i < command.argv_size(); ++i) text += (i ? " " : "") + Quote(command.argv(i));
  return text;
}

std::string Seconds(int64_t ms) {
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(1);
  out << static_cast<double>(ms) / 1000.0 << " s";
  return out.str();
}

// Each line of `text` (a note, a message, a command's output) escaped.
void Indented(std::ostringstream& out, const std::string& text, const std::string& indent) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();  // a CRLF line end
    out << indent << EscapeForTerminal(line) << "\n";
  }
}

}  // namespace

const char* StepPhaseText(v1::StepPhase phase) {
  switch (phase) {
    case v1::STEP_PHASE_PLANNED: return "planned";
    case v1::STEP_PHASE_SKIPPED: return "skipped";
    case v1::STEP_PHASE_RUNNING: return "running";
    case v1::STEP_PHASE_DONE: return "done";
    case v1::STEP_PHASE_FAILED: return "failed";
    default: return "unknown";
  }
}

std::string StepEventToText(const v1::StepEvent& step) {
  std::ostringstream out;
  std::string phase = StepPhaseText(step.phase());
  if (step.phase() == v1::STEP_PHASE_FAILED && step.failure().refused()) phase = "refused";
  std::string head = EscapeForTerminal(step.step());
  head.resize(std::max<size_t>(head.size(), 12), ' ');
  phase.resize(std::max<size_t>(phase.size(), 8), ' ');
  std::string detail = step.phase() == v1::STEP_PHASE_FAILED ? std::string() : step.detail();
  std::string first_line = EscapeForTerminal(std::string_view(detail).substr(0, detail.find('\n')));
  out << head << phase << first_line;
  if (step.phase() == v1::STEP_PHASE_DONE || step.phase() == v1::STEP_PHASE_SKIPPED ||
      step.phase() == v1::STEP_PHASE_FAILED) {
    out << (first_line.empty() ? "" : " ") << "(" << Seconds(step.elapsed_ms()) << ")";
  }
  out << "\n";
  const std::string indent(12, ' ');
  for (const auto& command : step.commands()) out << indent << "$ " << EscapeForTerminal(CommandText(command)) << "\n";
  for (const auto& note : step.notes()) Indented(out, note, indent + "note: ");
  if (step.phase() == v1::STEP_PHASE_FAILED) {
    const v1::StepFailure& failure = step.failure();
    Indented(out, failure.message(), indent);
    if (failure.command().argv_size() > 0) {
      out << indent << "command: " << EscapeForTerminal(CommandText(failure.command())) << "\n";
      out << indent << "exit status: " << failure.exit_code();
      if (failure.term_signal() != 0) out << " (signal " << failure.term_signal() << ")";
      out << "\n";
    }
    if (!failure.output_tail().empty()) {
      out << indent << "last output:\n";
      Indented(out, failure.output_tail(), indent + "  | ");
    }
  }
  return out.str();
}

std::string ProvisionSummaryToText(const v1::ProvisionSummary& summary) {
  Table table({"STEP", "RESULT", "TIME", "DETAIL"});
  for (const auto& step : summary.steps()) {
    std::string result = StepPhaseText(step.phase());
    if (summary.dry_run() && step.phase() == v1::STEP_PHASE_PLANNED) result = "would run";
    if (step.phase() == v1::STEP_PHASE_SKIPPED) result = summary.dry_run() ? "already done" : "skipped (done)";
    if (step.step() == summary.failed_step() && summary.refused()) result = "refused";
    std::string detail = step.detail().substr(0, step.detail().find('\n'));
    if (detail.size() > 100) {
      size_t cut = 97;  // where a character starts
      while (cut > 0 && (static_cast<unsigned char>(detail[cut]) & 0xC0) == 0x80) --cut;
      detail = detail.substr(0, cut) + "...";
    }
    table.AddRow({step.step(), result, step.elapsed_ms() > 0 ? Seconds(step.elapsed_ms()) : "-", detail});
  }
  std::ostringstream out;
  out << "\n" << table.Render();
  if (summary.ok()) {
    out << (summary.dry_run() ? "dry run: nothing was changed" : "provisioned") << " in "
        << Seconds(summary.elapsed_ms()) << "\n";
  } else {
    out << "stopped at " << EscapeForTerminal(summary.failed_step()) << (summary.refused() ? " (refused)" : " (failed)");
    // A dry run writes no progress: no state file to point to.
    if (summary.dry_run()) {
      out << "; a dry run changes and records nothing: fix the cause and run it again\n";
    } else {
      out << "; fix the cause and rerun: finished steps are skipped. Progress: "
          << EscapeForTerminal(summary.state_file()) << "\n";
    }
  }
  if (summary.reboot_required()) out << "reboot needed to load the new NVIDIA kernel module\n";
  return out.str();
}

}  // namespace gpuctl::client
