#include "client/output/event_json.h"

namespace gpuctl::client {

nlohmann::json AgentEventToJson(const v1::AgentEvent& event) {
  nlohmann::json fields = nlohmann::json::object();
  if (!event.fields_json().empty()) {
    nlohmann::json parsed = nlohmann::json::parse(event.fields_json(), nullptr, /*allow_exceptions=*/false);
    fields = parsed.is_object() ? std::move(parsed) : nlohmann::json{{"unparsed", event.fields_json()}};
  }
  return {{"seq", event.seq()},
          {"time_unix_ms", event.time_unix_ms()},
          {"kind", event.kind()},
          {"job", event.job().empty() ? nlohmann::json(nullptr) : nlohmann::json(event.job())},
          {"message", event.message()},
          {"fields", std::move(fields)}};
}

}  // namespace gpuctl::client
