#include "agents/provision/provision_state.h"

#include <nlohmann/json.hpp>

#include "agents/sys/files.h"
#include "common/json_text.h"

namespace gpuctl::provision {
namespace {

constexpr int kFormatVersion = 1;

}  // namespace

const char* StepPhaseName(StepPhase phase) {
  switch (phase) {
    case StepPhase::kPlanned: return "planned";
    case StepPhase::kSkipped: return "skipped";
    case StepPhase::kRunning: return "running";
    case StepPhase::kDone: return "done";
    case StepPhase::kFailed: return "failed";
  }
  return "unknown";
}

std::string ProvisionStatePath(const std::string& state_dir) { return state_dir + "/provision/state.json"; }

std::string SerializeProvisionState(const ProvisionState& state) {
  nlohmann::json steps = nlohmann::json::object();
  for (const auto& [name, record] : state.steps) {
    steps[name] = {{"phase", record.phase}, {"detail", record.detail}, {"updated_unix_ms", record.updated_unix_ms}};
  }
  nlohmann::json doc = {{"version", kFormatVersion},
                        {"updated_unix_ms", state.updated_unix_ms},
                        {"container", state.container},
                        {"steps", steps},
                        {"failed_step", state.failed_step}};
  if (state.failure) {
    doc["failure"] = {{"argv", state.failure->command.argv},
                      {"env", state.failure->command.env},
                      {"exit_code", state.failure->exit_code},
                      {"term_signal", state.failure->term_signal},
                      {"output_tail", state.failure->output_tail},
                      {"message", state.failure->message},
                      {"refused", state.failure->refused}};
  }
  return DumpJson(doc, 2) + "\n";
}

Result<ProvisionState> ParseProvisionState(std::string_view text) {
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object() || doc.value("version", 0) != kFormatVersion || !doc.contains("steps") ||
      !doc["steps"].is_object()) {
    return InvalidArgument("not a provisioning state file (version " + std::to_string(kFormatVersion) + ")");
  }
  try {
    ProvisionState state;
    state.updated_unix_ms = doc.value("updated_unix_ms", int64_t{0});
    state.container = doc.value("container", "");
    state.failed_step = doc.value("failed_step", "");
    for (const auto& [name, record] : doc["steps"].items()) {
      state.steps[name] = StepRecord{record.value("phase", ""), record.value("detail", ""),
                                     record.value("updated_unix_ms", int64_t{0})};
    }
    if (doc.contains("failure") && doc["failure"].is_object()) {
      const auto& f = doc["failure"];
      StepFailure failure;
      failure.command.argv = f.value("argv", std::vector<std::string>{});
      failure.command.env = f.value("env", std::map<std::string, std::string>{});
      failure.exit_code = f.value("exit_code", -1);
      failure.term_signal = f.value("term_signal", 0);
      failure.output_tail = f.value("output_tail", "");
      failure.message = f.value("message", "");
      failure.refused = f.value("refused", false);
      state.failure = failure;
    }
    return state;
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(std::string("provisioning state file has a field of the wrong type: ") + e.what());
  }
}

Result<ProvisionState> LoadProvisionState(const std::string& path) {
  if (!sys::PathExists(path)) return ProvisionState{};
  auto text = sys::ReadWholeFile(path);
  if (!text.ok()) return text.status();
  auto state = ParseProvisionState(*text);
  if (!state.ok()) return state.status().Wrap(path);
  return state;
}

Status SaveProvisionState(const std::string& path, const ProvisionState& state) {
  std::string dir = path.substr(0, path.rfind('/'));
  if (Status s = sys::EnsureDir(dir, 0700); !s.ok()) return s;
  return sys::WriteFileAtomic(path, SerializeProvisionState(state), 0600);
}

}  // namespace gpuctl::provision
