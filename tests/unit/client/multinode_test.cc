// Multi-node jobs' pure parts: the torchrun command each node's part gets,
// refusals, and the record kept beside nodes.json.
#include <set>

#include <gtest/gtest.h>

#include "client/multinode/multinode_plan.h"
#include "client/multinode/multinode_store.h"
#include "tests/fakes/temp_dir.h"

namespace gpuctl::client {
namespace {

Node At(const std::string& name, const std::string& host) {
  Node node;
  node.name = name;
  node.host = host;
  return node;
}

v1::StartJobRequest Base() {
  v1::StartJobRequest base;
  base.mutable_spec()->set_name("ring");
  base.mutable_spec()->add_command("/srv/train.py");
  base.mutable_spec()->add_command("--lr");
  base.mutable_spec()->add_command("3e-4");
  (*base.mutable_spec()->mutable_env())["WANDB_MODE"] = "offline";
  base.mutable_spec()->set_anchors(768);
  return base;
}

std::vector<std::string> Argv(const v1::JobSpec& spec) { return {spec.command().begin(), spec.command().end()}; }

TEST(PlanMultinode, EachRankRunsTorchrunWithTheFirstNodesRendezvous) {
  MultinodeOptions options{.nodes = {At("a", "10.0.0.5"), At("b", "10.0.0.6")},
                           .nproc_per_node = 8,
                           .rdzv_port = 29500,
                           .rdzv_host = "",
                           .rdzv_id = "ring-0123456789ab",
                           .torchrun = "/opt/venv/bin/torchrun"};
  Result<std::vector<MultinodePart>> parts = PlanMultinode(Base(), options);
  ASSERT_TRUE(parts.ok()) << parts.status().message();
  ASSERT_EQ(parts->size(), 2u);
  for (uint32_t rank = 0; rank < 2; ++rank) {
    const MultinodePart& part = (*parts)[rank];
    const v1::JobSpec& spec = part.request.spec();
    EXPECT_EQ(part.rank, rank);
    EXPECT_EQ(part.node, rank == 0 ? "a" : "b");
    EXPECT_EQ(Argv(spec), (std::vector<std::string>{"/opt/venv/bin/torchrun", "--nnodes", "2", "--node-rank",
                                                     std::to_string(rank), "--nproc-per-node", "8", "--rdzv-backend",
                                                     "c10d", "--rdzv-endpoint", "10.0.0.5:29500", "--rdzv-id",
                                                     "ring-0123456789ab", "--rdzv-conf",
                                                     rank == 0 ? "is_host=1" : "is_host=0", "--local-addr",
                                                     rank == 0 ? "10.0.0.5" : "10.0.0.6", "/srv/train.py", "--lr",
                                                     "3e-4"}));
    EXPECT_EQ(spec.name(), "ring");
    EXPECT_EQ(spec.anchors(), 768u);  // the rest of the job as given
    EXPECT_EQ(spec.env().at("WANDB_MODE"), "offline");
    EXPECT_EQ(spec.env().at("GPUCTL_MULTINODE_ID"), "ring-0123456789ab");
    EXPECT_EQ(spec.env().at("GPUCTL_MULTINODE_NODES"), "a,b");
    EXPECT_EQ(spec.env().at("GPUCTL_MULTINODE_RANK"), std::to_string(rank));
  }
}

TEST(MirrorRelaunch, EveryPartTakesTheRelaunchedOnesSettingsAndCheckpoint) {
  MultinodeOptions options{.nodes = {At("a", "10.0.0.5"), At("b", "10.0.0.6")},
                           .nproc_per_node = 1,
                           .rdzv_port = 29500,
                           .rdzv_host = "",
                           .rdzv_id = "ring-0123456789ab",
                           .torchrun = "torchrun"};
  Result<std::vector<MultinodePart>> parts = PlanMultinode(Base(), options);
  ASSERT_TRUE(parts.ok()) << parts.status().message();
  // Rank 1's agent relaunched it after a hang, from checkpoint-40, with
  // expandable segments and 512 anchors (an earlier OOM's change).
  v1::JobSpec relaunched = (*parts)[1].request.spec();
  relaunched.set_anchors(512);
  relaunched.set_alloc_conf("expandable_segments:True");
  relaunched.set_resume_from("/data/run/checkpoint-40");
  Result<v1::JobSpec> rank0 = MirrorRelaunch((*parts)[0].request.spec(), relaunched);
  ASSERT_TRUE(rank0.ok()) << rank0.status().message();
  EXPECT_EQ(rank0->resume_from(), "/data/run/checkpoint-40");
  EXPECT_EQ(rank0->anchors(), 512u);
  EXPECT_EQ(rank0->alloc_conf(), "expandable_segments:True");
  EXPECT_EQ(Argv(*rank0), Argv((*parts)[0].request.spec())) << "its own rank and address kept";
}

TEST(PlanMultinode, AnIpv6OrGivenRendezvousHost) {
  MultinodeOptions options;
  options.nodes = {At("a", "fd00::5"), At("b", "fd00::6"), At("c", "fd00::7")};
  options.rdzv_id = "x-1";
  std::vector<std::string> argv = Argv(PlanMultinode(Base(), options)->at(2).request.spec());
  EXPECT_EQ(argv[2], "3");
  EXPECT_EQ(argv[10], "[fd00::5]:29400");
  options.rdzv_host = "head.internal";
  EXPECT_EQ(Argv(PlanMultinode(Base(), options)->at(1).request.spec())[10], "head.internal:29400");
}

TEST(PlanMultinode, RefusesWhatCannotRun) {
  MultinodeOptions options;
  options.nodes = {At("a", "h1")};
  options.rdzv_id = "x-1";
  EXPECT_EQ(PlanMultinode(Base(), options).status().code(), ErrorCode::kInvalidArgument);  // one node
  options.nodes = {At("a", "h1"), At("a", "h1")};
  EXPECT_NE(PlanMultinode(Base(), options).status().message().find("twice"), std::string::npos);
  options.nodes = {At("a", "h1"), At("b", "h2")};
  options.nproc_per_node = 0;
  EXPECT_NE(PlanMultinode(Base(), options).status().message().find("--nproc-per-node"), std::string::npos);
  options.nproc_per_node = 1;
  options.rdzv_port = 0;
  EXPECT_NE(PlanMultinode(Base(), options).status().message().find("--rdzv-port"), std::string::npos);
  options.rdzv_port = 29400;
  v1::StartJobRequest script;
  script.mutable_spec()->set_script("/srv/run.sh");
  EXPECT_NE(PlanMultinode(script, options).status().message().find("after '--'"), std::string::npos);
}

TEST(NewRdzvId, UniquePerStart) {
  std::set<std::string> ids;
  for (int i = 0; i < 100; ++i) ids.insert(NewRdzvId("ring"));
  EXPECT_EQ(ids.size(), 100u);
  EXPECT_EQ(ids.begin()->rfind("ring-", 0), 0u);
  EXPECT_EQ(ids.begin()->size(), 5u + 12u);
}

TEST(MultinodeStore, KeepsFindsAndRemovesJobs) {
  testing::TempDir dir;
  MultinodeStore store(dir.path() + "/gpuctl/multinode.json");
  EXPECT_EQ(store.Find("ring").status().code(), ErrorCode::kNotFound);
  MultinodeJob job{.name = "ring", .nodes = {"a", "b"}, .rdzv_id = "ring-1", .rdzv_endpoint = "10.0.0.5:29400",
                   .nproc_per_node = 8, .started_unix_ms = 1'750'000'000'000};
  ASSERT_TRUE(store.Add(job).ok());
  Result<MultinodeJob> found = store.Find("ring");
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(*found, job);
  EXPECT_EQ(store.Add(job).code(), ErrorCode::kAlreadyExists);
  ASSERT_TRUE(store.Remove("ring").ok());
  EXPECT_EQ(store.Find("ring").status().code(), ErrorCode::kNotFound);
  EXPECT_FALSE(ParseMultinodeFile(R"({"jobs":[{"name":"x"}]})", "f").ok());
}

}  // namespace
}  // namespace gpuctl::client
