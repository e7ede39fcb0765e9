#include <time.h>

#include <gtest/gtest.h>

#include <memory>

#include "client/output/event_json.h"
#include "client/output/event_text.h"
#include "tests/fakes/scoped_env.h"

namespace gpuctl::client {
namespace {

// 2025-06-01T12:03:07.045Z
constexpr int64_t kTime = 1748779387045;

// Sets TZ (a POSIX rule, so no tzdata is needed) for one scope, then puts
// the old zone back.
class LocalZone {
 public:
  explicit LocalZone(const std::string& tz) : env_(std::make_unique<testing::ScopedEnv>("TZ", tz)) { tzset(); }
  ~LocalZone() {
    env_.reset();
    tzset();
  }

 private:
  std::unique_ptr<testing::ScopedEnv> env_;
};

v1::AgentEvent GuardKill() {
  v1::AgentEvent e;
  e.set_seq(42);
  e.set_time_unix_ms(kTime);
  e.set_kind("guard_kill");
  e.set_job("dflash");
  e.set_message("killed job dflash (41.2 GiB) 38 ms after available memory fell below 1.0 GiB");
  e.set_fields_json(R"({"reaction_ms":38,"victim":{"job":"dflash","rss_bytes":44236955648}})");
  return e;
}

TEST(EventText, FormatsLocalTimeToTheMillisecondWithItsOffset) {
  {
    LocalZone utc("UTC0");
    EXPECT_EQ(FormatLocalTimeMs(kTime), "2025-06-01T12:03:07.045+00:00");
    EXPECT_EQ(FormatLocalTimeMs(0), "1970-01-01T00:00:00.000+00:00");
    EXPECT_EQ(FormatLocalTimeMs(-1), "1969-12-31T23:59:59.999+00:00");
  }
  {
    LocalZone berlin("CET-1CEST,M3.5.0,M10.5.0/3");
    EXPECT_EQ(FormatLocalTimeMs(kTime), "2025-06-01T14:03:07.045+02:00");  // summer
    EXPECT_EQ(FormatLocalTimeMs(1735732800000), "2025-01-01T13:00:00.000+01:00");  // winter
  }
  {
    LocalZone india("IST-5:30");
    EXPECT_EQ(FormatLocalTimeMs(kTime), "2025-06-01T17:33:07.045+05:30");
  }
}

TEST(EventText, OneLinePerEventWithTimeKindJobAndMessage) {
  LocalZone utc("UTC0");
  EXPECT_EQ(AgentEventToText(GuardKill()),
            "2025-06-01T12:03:07.045+00:00 guard_kill     dflash killed job dflash (41.2 GiB) 38 ms after "
            "available memory fell below 1.0 GiB\n");
}

TEST(EventText, NoJobIsADashAndLineBreaksBecomeSpaces) {
  LocalZone utc("UTC0");
  v1::AgentEvent e;
  e.set_seq(0);
  e.set_time_unix_ms(kTime);
  e.set_kind("events_dropped");
  e.set_message("3 events were dropped:\nthis reader\tfell behind\r");
  EXPECT_EQ(AgentEventToText(e),
            "2025-06-01T12:03:07.045+00:00 events_dropped - 3 events were dropped: this reader fell behind \n");
  e.set_kind("a_much_longer_kind_than_usual");
  EXPECT_EQ(AgentEventToText(e).substr(30, 31), "a_much_longer_kind_than_usual -");
}

TEST(EventJson, CarriesEveryFieldWithFieldsAsAnObject) {
  nlohmann::json j = AgentEventToJson(GuardKill());
  EXPECT_EQ(j, nlohmann::json::parse(R"({
    "seq": 42, "time_unix_ms": 1748779387045, "kind": "guard_kill", "job": "dflash",
    "message": "killed job dflash (41.2 GiB) 38 ms after available memory fell below 1.0 GiB",
    "fields": {"reaction_ms": 38, "victim": {"job": "dflash", "rss_bytes": 44236955648}}})"));
  // One line: the form scripts read with `jq` or line by line.
  EXPECT_EQ(j.dump().find('\n'), std::string::npos);
}

TEST(EventJson, NoJobIsNullAndMissingOrOddFieldsStayAnObject) {
  v1::AgentEvent e;
  e.set_kind("guard_warning");
  nlohmann::json j = AgentEventToJson(e);
  EXPECT_TRUE(j["job"].is_null());
  EXPECT_EQ(j["fields"], nlohmann::json::object());
  EXPECT_EQ(j["seq"], 0);
  e.set_fields_json("[1,2]");
  EXPECT_EQ(AgentEventToJson(e)["fields"], (nlohmann::json{{"unparsed", "[1,2]"}}));
  e.set_fields_json("{not json");
  EXPECT_EQ(AgentEventToJson(e)["fields"], (nlohmann::json{{"unparsed", "{not json"}}));
}

}  // namespace
}  // namespace gpuctl::client
