#include "daemon/service/event_convert.h"

#include "common/json_text.h"
#include "common/utf8.h"

namespace gpuctl::daemon {

void ToProto(const events::AgentEvent& in, v1::AgentEvent& out) {
  out.set_seq(in.seq);
  out.set_time_unix_ms(in.time_unix_ms);
  out.set_kind(SanitizeUtf8(in.kind));
  out.set_job(SanitizeUtf8(in.job));
  out.set_message(SanitizeUtf8(in.message));
  // The contract is an object; anything else a publisher put there is kept under "value".
  nlohmann::json fields = in.fields.is_object() ? in.fields
                          : in.fields.is_null() ? nlohmann::json::object()
                                                : nlohmann::json{{"value", in.fields}};
  // replace: invalid UTF-8 inside a field becomes U+FFFD instead of throwing.
  out.set_fields_json(DumpJson(fields, -1));
}

}  // namespace gpuctl::daemon
