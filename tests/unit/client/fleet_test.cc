// The fan-out's pure parts: selecting nodes, the bounded runner, the pool's
// reuse and reconnects, exit codes, and the fleet and top tables.
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "client/exit_codes.h"
#include "client/fleet/fan_out.h"
#include "client/fleet/node_selector.h"
#include "client/output/fleet_text.h"
#include "client/output/table.h"
#include "client/output/top_view.h"

namespace gpuctl::client {
namespace {

Node Named(const std::string& name, std::map<std::string, std::string> labels = {}) {
  Node node;
  node.name = name;
  node.host = name + ".example";
  node.labels = std::move(labels);
  return node;
}

std::vector<std::string> Names(const std::vector<Node>& nodes) {
  std::vector<std::string> names;
  for (const Node& n : nodes) names.push_back(n.name);
  return names;
}

const std::vector<Node> kNodes = {Named("a", {{"gpu", "h200"}}), Named("b", {{"gpu", "a100"}, {"rack", "2"}}),
                                  Named("c", {{"gpu", "h200"}, {"rack", "2"}})};

TEST(SelectNodes, AllNamesAndLabelsInFileOrderOnce) {
  EXPECT_EQ(Names(*SelectNodes(kNodes, "all")), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(Names(*SelectNodes(kNodes, "c,a")), (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(Names(*SelectNodes(kNodes, "@gpu=h200")), (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(Names(*SelectNodes(kNodes, "@rack")), (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(Names(*SelectNodes(kNodes, "b,@gpu=h200,a")), (std::vector<std::string>{"a", "b", "c"}));
}

TEST(SelectNodes, UnknownNamesLabelsAndEmptyPartsAreErrorsThatSayTheFix) {
  Result<std::vector<Node>> unknown = SelectNodes(kNodes, "a,zz");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("gpuctl node add zz"), std::string::npos);
  Result<std::vector<Node>> label = SelectNodes(kNodes, "@gpu=b200");
  ASSERT_FALSE(label.ok());
  EXPECT_NE(label.status().message().find("--label gpu=b200"), std::string::npos);
  EXPECT_EQ(SelectNodes(kNodes, "a,,b").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(SelectNodes(kNodes, "").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(SelectNodes({}, "all").status().code(), ErrorCode::kNotFound);
}

TEST(ParseNodeLabel, KeyValueAndEmptyValueAndRefusals) {
  EXPECT_EQ(*ParseNodeLabel("gpu=h200"), std::make_pair(std::string("gpu"), std::string("h200")));
  EXPECT_EQ(*ParseNodeLabel("spot="), std::make_pair(std::string("spot"), std::string("")));
  Result<std::pair<std::string, std::string>> bare = ParseNodeLabel("spot");
  ASSERT_FALSE(bare.ok()) << "a KEY without = is refused, not taken as an empty value";
  EXPECT_NE(bare.status().message().find("give KEY=VALUE"), std::string::npos);
  EXPECT_EQ(*ParseNodeLabel("site/zone=eu-1"), std::make_pair(std::string("site/zone"), std::string("eu-1")));
  EXPECT_FALSE(ParseNodeLabel("=x").ok());
  EXPECT_FALSE(ParseNodeLabel("a b=c").ok());
  EXPECT_FALSE(ParseNodeLabel("k=a,b").ok());  // ',' separates --nodes parts
  EXPECT_FALSE(ParseNodeLabel("k=a\nb").ok());
  EXPECT_FALSE(ParseNodeLabel(std::string(64, 'k') + "=v").ok());
}

TEST(NodesFile, LabelsSurviveARoundTrip) {
  std::string text = FormatNodesFile(kNodes);
  Result<std::vector<Node>> back = ParseNodesFile(text, "nodes.json");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, kNodes);
  EXPECT_FALSE(ParseNodesFile(R"({"nodes":[{"name":"a","host":"h","labels":{"k":1}}]})", "f").ok());
}

TEST(RunBounded, RunsEveryIndexOnceAndNeverMoreThanTheBoundAtOnce) {
  std::atomic<int> running{0}, most{0};
  std::vector<std::atomic<int>> seen(40);
  RunBounded(40, 6, [&](size_t i) {
    int now = ++running;
    int prev = most.load();
    while (now > prev && !most.compare_exchange_weak(prev, now)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ++seen[i];
    --running;
  });
  for (auto& s : seen) EXPECT_EQ(s.load(), 1);
  EXPECT_LE(most.load(), 6);
  EXPECT_GE(most.load(), 2);  // it did run at once
}

TEST(NodePool, ConnectsOncePerNodeAndReconnectsOnlyAfterTheAgentWentAway) {
  std::mutex mu;
  std::map<std::string, int> connects;
  NodePool pool({Named("up"), Named("down")}, [&](const Node& node) -> Result<std::unique_ptr<AgentClient>> {
    std::lock_guard lock(mu);
    ++connects[node.name];
    if (node.name == "down") return Unavailable("ssh: connection refused");
    return std::make_unique<AgentClient>("unix:/nonexistent/x.sock");
  });
  int calls = 0;
  for (int round = 0; round < 3; ++round) {
    std::vector<NodeAnswer> answers = pool.AskAll(16, [&](size_t, AgentClient&) {
      ++calls;
      return Status::Ok();
    });
    ASSERT_EQ(answers.size(), 2u);
    EXPECT_TRUE(answers[0].reached && answers[0].status.ok());
    EXPECT_FALSE(answers[1].reached);
    EXPECT_EQ(answers[1].status.message(), "ssh: connection refused");
    EXPECT_EQ(FanOutExitCode(answers), kExitSomeNodesUnreached);
  }
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(connects["up"], 1);    // reused across calls
  EXPECT_EQ(connects["down"], 3);  // tried again each time
  // A call that finds the agent gone drops the connection: the next reconnects.
  NodeAnswer gone = pool.Ask(0, [](AgentClient&) { return Unavailable("agent went away"); });
  EXPECT_FALSE(gone.reached);
  EXPECT_TRUE(pool.Ask(0, [](AgentClient&) { return Status::Ok(); }).reached);
  EXPECT_EQ(connects["up"], 2);
  // An agent that answers with an error was reached.
  NodeAnswer refused = pool.Ask(0, [](AgentClient&) { return NotFound("no job named x"); });
  EXPECT_TRUE(refused.reached);
  EXPECT_EQ(FanOutExitCode({refused}), kExitOk);
}

TEST(Table, SpanningRowsTakeTheirOwnWidthOnly) {
  Table table({"NODE", "A", "B"});
  table.AddRow({"n1", "x", "y"});
  table.AddSpanningRow("node-two", "error: a long message that would widen column A");
  EXPECT_EQ(table.Render(),
            "NODE      A  B\n"
            "n1        x  y\n"
            "node-two  error: a long message that would widen column A\n");
}

v1::HealthSnapshot TwoGpus() {
  v1::HealthSnapshot s;
  s.mutable_host()->set_mem_available_bytes(64ull << 30);
  s.mutable_host()->mutable_memory_pressure()->mutable_some()->set_avg10(1.5);
  s.mutable_host()->mutable_memory_pressure()->mutable_full()->set_avg10(0.25);
  for (uint32_t i = 0; i < 2; ++i) {
    v1::Gpu* g = s.add_gpus();
    g->set_index(i);
    g->set_name("NVIDIA H200");
    g->set_memory_total_bytes(140ull << 30);
    g->set_memory_used_bytes((10ull + i) << 30);
    g->set_utilization_gpu_pct(90 + i);
    g->set_temperature_c(40 + i);
    g->set_power_draw_w(500.4);
  }
  return s;
}

TEST(FleetHealthToText, OneRowPerGpuWithTheNodeAndAnErrorRowForTheUnreached) {
  v1::HealthSnapshot two = TwoGpus();
  v1::HealthSnapshot none;
  none.mutable_host()->set_mem_available_bytes(1ull << 30);
  none.set_gpu_error("NVML: driver not loaded");
  std::string text = FleetHealthToText({{"a", &two, ""}, {"b", &none, ""}, {"c", nullptr, "cannot reach\nhint"}});
  EXPECT_EQ(text,
            "NODE  MEM FREE  PSI 10S      GPU  NAME         MEMORY                UTIL  TEMP  POWER\n"
            "a     64.0 GiB  1.50%/0.25%  0    NVIDIA H200  10.0 GiB / 140.0 GiB  90%   40C   500W\n"
            "a     64.0 GiB  1.50%/0.25%  1    NVIDIA H200  11.0 GiB / 140.0 GiB  91%   41C   500W\n"
            "b     1.0 GiB   -            -    no GPUs: NVML: driver not loaded\n"
            "c     error: cannot reach\n");
}

v1::ListJobsResponse OneJob(int64_t now) {
  v1::ListJobsResponse list;
  v1::Job* job = list.add_jobs();
  job->mutable_spec()->set_name("dflash");
  job->set_state(v1::JOB_STATE_RUNNING);
  job->set_pid(4242);
  job->set_started_unix_ms(now - 65'000);
  job->mutable_metrics()->set_step(120);
  job->mutable_metrics()->set_loss(0.4213);
  job->mutable_metrics()->mutable_throughput()->set_value(5123);
  job->mutable_metrics()->mutable_throughput()->set_unit("tok/s");
  v1::JobGpuMemory* gpu = job->add_gpu_memory();
  gpu->set_used_bytes(20ull << 30);
  v1::JobEvent* e = job->add_events();
  e->set_kind("cuda_oom");
  e->set_time_unix_ms(now - 120'000);
  return list;
}

TEST(TopView, TextHasTheGpuTableAndTheJobsWithTheirLastEvent) {
  int64_t now = 1'750'000'000'000;
  TopNode a{"a", TwoGpus(), OneJob(now), "", true};
  TopNode b{"b", std::nullopt, std::nullopt, "ssh: connection refused", false};
  std::string text = TopToText({a, b}, now);
  EXPECT_EQ(text.substr(0, text.find('\n')), "gpuctl top: 2 nodes, 1 not reached");
  EXPECT_NE(text.find("b     error: ssh: connection refused\n"), std::string::npos) << text;
  EXPECT_NE(text.find("NODE  JOB     STATE    STEP  LOSS    THROUGHPUT  GPU MEM   LAST EVENT\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("a     dflash  running  120   0.4213  5123 tok/s  20.0 GiB  cuda_oom 2m00s ago\n"),
            std::string::npos)
      << text;
}

TEST(TopView, JsonHasEveryNodeWithHealthJobsOrItsError) {
  int64_t now = 1'750'000'000'000;
  nlohmann::json j = TopToJson({{"a", TwoGpus(), OneJob(now), "", true}, {"b", std::nullopt, std::nullopt, "down", false}}, now);
  EXPECT_EQ(j["time_unix_ms"], now);
  ASSERT_EQ(j["nodes"].size(), 2u);
  EXPECT_EQ(j["nodes"][0]["node"], "a");
  EXPECT_EQ(j["nodes"][0]["reached"], true);
  EXPECT_TRUE(j["nodes"][0]["error"].is_null());
  EXPECT_EQ(j["nodes"][0]["health"]["gpus"].size(), 2u);
  EXPECT_EQ(j["nodes"][0]["jobs"][0]["name"], "dflash");
  EXPECT_EQ(j["nodes"][1]["reached"], false);
  EXPECT_EQ(j["nodes"][1]["error"], "down");
  EXPECT_TRUE(j["nodes"][1]["health"].is_null());
  EXPECT_TRUE(j["nodes"][1]["jobs"].empty());
}

}  // namespace
}  // namespace gpuctl::client
