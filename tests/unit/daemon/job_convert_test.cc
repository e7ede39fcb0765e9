// FromProto: the wire's JobSpec to the plain one the train agent runs. Each
// field reaches the spec, an unset field takes the spec's default (presence
// counts: an explicit 0 is not "unset"), and values the agent cannot read
// are refused before anything starts.
#include "daemon/service/job_convert.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/fakes/job_fields.h"

namespace gpuctl::daemon {
namespace {

using testing::ExpectEveryFieldSet;
using testing::ExpectSameFields;

// Every field of the wire's JobSpec set.
v1::JobSpec FullProto() {
  v1::JobSpec p;
  p.set_name("dflash-768");
  p.add_command("/srv/train.sh");
  p.add_command("--lr");
  p.add_command("3e-4");
  p.set_script("/srv/train.sh");
  p.set_anchors(1024);
  p.set_anchors_flag("--budget");
  p.set_alloc_conf("expandable_segments:True");
  (*p.mutable_env())["WANDB_MODE"] = "offline";
  (*p.mutable_env())["A"] = "x y";
  p.set_cwd("/srv");
  p.set_gpus("0,1");
  p.set_container("200");
  p.set_mem_limit_bytes(64ull << 30);
  p.set_on_oom("recover");
  p.set_on_oom_policy(v1::ON_OOM_RECOVER);
  p.set_oom_retries(5);
  p.add_oom_knobs("--batch-size:0.5:2");
  p.add_oom_knobs("--budget:0.8:128");
  p.add_retry_args("--resume");
  p.add_retry_args("latest");
  p.set_attempt(7);
  p.set_num_gpus(2);
  p.set_gpu_mem_bytes(40ull << 30);
  p.set_priority(-3);
  p.set_kind("build");
  p.mutable_build()->set_mem_budget_bytes(48ull << 30);
  p.mutable_build()->set_cpus(12);
  p.mutable_build()->add_archs("8.0");
  p.mutable_build()->add_archs("9.0");
  p.set_on_hang(v1::ON_HANG_RECOVER);
  p.set_hang_after_ms(1'200'000);
  p.set_start_timeout_ms(3'600'000);
  p.set_checkpoint_dir("/srv/ckpt");
  p.set_resume_arg("--resume_from_checkpoint={checkpoint}");
  p.set_checkpoint_complete("DONE");
  p.set_on_fail(v1::ON_FAIL_RECOVER);
  p.set_on_gpu_fault(v1::ON_FAIL_RECOVER);
  p.set_max_restarts_without_progress(5);
  p.set_resume_from("/srv/ckpt/checkpoint-400");
  return p;
}

// What FullProto must become, written out on its own.
train::JobSpec FullSpec() {
  train::JobSpec s;
  s.name = "dflash-768";
  s.kind = "build";
  s.build.mem_budget_bytes = 48ull << 30;
  s.build.cpus = 12;
  s.build.archs = {"8.0", "9.0"};
  s.command = {"/srv/train.sh", "--lr", "3e-4"};
  s.script = "/srv/train.sh";
  s.anchors = 1024;
  s.anchors_flag = "--budget";
  s.alloc_conf = "expandable_segments:True";
  s.env = {{"A", "x y"}, {"WANDB_MODE", "offline"}};
  s.cwd = "/srv";
  s.gpus = "0,1";
  s.container = "200";
  s.mem_limit_bytes = 64ull << 30;
  s.oom.recover = true;
  s.oom.retries = 5;
  s.oom.knobs = {{"--batch-size", 0.5, 2}, {"--budget", 0.8, 128}};
  s.oom.retry_args = {"--resume", "latest"};
  s.num_gpus = 2;
  s.gpu_mem_bytes = 40ull << 30;
  s.priority = -3;
  s.hang.policy = OnHang::kRecover;
  s.hang.after_ms = 1'200'000;
  s.hang.start_timeout_ms = 3'600'000;
  s.checkpoint.dir = "/srv/ckpt";
  s.checkpoint.resume_arg = "--resume_from_checkpoint={checkpoint}";
  s.checkpoint.complete_marker = "DONE";
  s.checkpoint.max_restarts_without_progress = 5;
  s.on_fail = OnFail::kRecover;
  s.on_gpu_fault = OnFail::kRecover;
  s.resume_from = "/srv/ckpt/checkpoint-400";
  // attempt stays 1: the agent numbers its runs, a client cannot.
  return s;
}

void ExpectSameSpec(const train::JobSpec& got, const train::JobSpec& expected) {
  ExpectSameFields(got, expected, "spec");
  ExpectSameFields(got.oom, expected.oom, "spec.oom");
  ExpectSameFields(got.build, expected.build, "spec.build");
  ExpectSameFields(got.hang, expected.hang, "spec.hang");
  ExpectSameFields(got.checkpoint, expected.checkpoint, "spec.checkpoint");
  EXPECT_TRUE(got == expected);
}

// A field added to the wire's JobSpec must be carried by FromProto and set
// in FullProto; this count sends whoever adds one here.
TEST(JobSpecFromProto, TheTestKnowsEveryWireField) {
  EXPECT_EQ(v1::JobSpec::descriptor()->field_count(), 32) << "carry the new field in FromProto, set it in FullProto";
  EXPECT_EQ(v1::BuildOptions::descriptor()->field_count(), 3);
  // FullProto sets each of them (repeated ones non-empty, singular ones present).
  const v1::JobSpec p = FullProto();
  const google::protobuf::Reflection* reflection = p.GetReflection();
  for (int i = 0; i < v1::JobSpec::descriptor()->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* field = v1::JobSpec::descriptor()->field(i);
    if (field->is_repeated()) {
      EXPECT_GT(reflection->FieldSize(p, field), 0) << field->name();
    } else {
      EXPECT_TRUE(reflection->HasField(p, field)) << field->name();
    }
  }
}

TEST(JobSpecFromProto, EveryFieldReachesTheSpec) {
  // The expected spec leaves nothing at its default but the attempt.
  ExpectEveryFieldSet(FullSpec(), "expected spec", {"attempt"});
  ExpectEveryFieldSet(FullSpec().hang, "expected spec.hang");
  ExpectEveryFieldSet(FullSpec().checkpoint, "expected spec.checkpoint");
  ExpectEveryFieldSet(FullSpec().oom, "expected spec.oom");
  ExpectEveryFieldSet(FullSpec().build, "expected spec.build");

  Result<train::JobSpec> spec = FromProto(FullProto());
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  ExpectSameSpec(*spec, FullSpec());
  EXPECT_EQ(spec->attempt, 1u) << "the wire's attempt is the agent's to set, not the client's";
  EXPECT_EQ(spec->resume_from, "/srv/ckpt/checkpoint-400");
}

TEST(JobSpecFromProto, AnEmptySpecTakesTheDefaults) {
  Result<train::JobSpec> spec = FromProto(v1::JobSpec());
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  ExpectSameSpec(*spec, train::JobSpec{});
  // The defaults themselves, as the wire documents them.
  EXPECT_EQ(spec->anchors_flag, "--max-anchors");
  EXPECT_EQ(spec->anchors, std::nullopt);
  EXPECT_EQ(spec->mem_limit_bytes, std::nullopt);
  EXPECT_EQ(spec->gpu_mem_bytes, std::nullopt);
  EXPECT_FALSE(spec->oom.recover);
  EXPECT_EQ(spec->oom.retries, 3u);
  EXPECT_TRUE(spec->oom.knobs.empty());
  EXPECT_EQ(spec->kind, "train");
  EXPECT_EQ(spec->attempt, 1u);
}

// Optional fields set to 0 are values, not "unset": --anchors 0 reaches the
// spec's validation (which refuses it with a message) instead of vanishing,
// and --oom-retries 0 means no relaunch, not the default 3.
TEST(JobSpecFromProto, PresenceCountsForOptionalFields) {
  v1::JobSpec p;
  p.set_name("j");
  p.set_anchors(0);
  p.set_mem_limit_bytes(0);
  p.set_gpu_mem_bytes(0);
  p.set_oom_retries(0);
  p.mutable_build()->set_mem_budget_bytes(0);
  p.set_kind("build");
  Result<train::JobSpec> spec = FromProto(p);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->anchors, std::optional<uint64_t>(0));
  EXPECT_EQ(spec->mem_limit_bytes, std::optional<uint64_t>(0));
  EXPECT_EQ(spec->gpu_mem_bytes, std::optional<uint64_t>(0));
  EXPECT_EQ(spec->oom.retries, 0u);
  EXPECT_EQ(spec->build.mem_budget_bytes, std::optional<uint64_t>(0));
}

TEST(JobSpecFromProto, OnOomFailAndTrainKindAreTheDefaultsSpelledOut) {
  v1::JobSpec p;
  p.set_name("j");
  p.set_on_oom("fail");
  p.set_kind("train");
  // Build options mean nothing to a training job, and are not carried.
  p.mutable_build()->set_cpus(4);
  p.mutable_build()->add_archs("9.0");
  Result<train::JobSpec> spec = FromProto(p);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_FALSE(spec->oom.recover);
  EXPECT_EQ(spec->kind, "train");
  EXPECT_EQ(spec->build, train::BuildOptions{});
}

TEST(JobSpecFromProto, RefusesWhatTheAgentCannotRead) {
  struct Case {
    const char* what;
    void (*set)(v1::JobSpec&);
    const char* message;
  };
  const Case cases[] = {
      // An older client's string (no typed on_oom_policy).
      {"on_oom retry",
       [](v1::JobSpec& p) {
         p.clear_on_oom_policy();
         p.set_on_oom("retry");
       },
       "--on-oom must be fail or recover, got 'retry'"},
      {"on_oom Recover",
       [](v1::JobSpec& p) {
         p.clear_on_oom_policy();
         p.set_on_oom("Recover");
       },
       "got 'Recover'"},
      {"knob factor 1.5", [](v1::JobSpec& p) { p.add_oom_knobs("--batch-size:1.5"); }, "--batch-size:1.5"},
      {"knob min 0", [](v1::JobSpec& p) { p.add_oom_knobs("--batch-size:0.5:0"); }, "--batch-size:0.5:0"},
      {"knob without a flag", [](v1::JobSpec& p) { p.add_oom_knobs(":0.5"); }, "--oom-knob ':0.5'"},
      {"a good knob, then a bad one",
       [](v1::JobSpec& p) {
         p.add_oom_knobs("--budget:0.5");
         p.add_oom_knobs("--batch-size:x");
       },
       "--batch-size:x"},
      {"kind deploy", [](v1::JobSpec& p) { p.set_kind("deploy"); }, "job kind must be train or build, got 'deploy'"},
      {"kind Build", [](v1::JobSpec& p) { p.set_kind("Build"); }, "got 'Build'"},
  };
  for (const Case& c : cases) {
    v1::JobSpec p = FullProto();
    p.clear_oom_knobs();
    c.set(p);
    Result<train::JobSpec> spec = FromProto(p);
    ASSERT_FALSE(spec.ok()) << c.what;
    EXPECT_EQ(spec.status().code(), ErrorCode::kInvalidArgument) << c.what;
    EXPECT_NE(spec.status().message().find(c.message), std::string::npos)
        << c.what << ": " << spec.status().message();
  }
}

// --on-oom travels typed (on_oom_policy); an older client sends only the
// string, which still works; where both are set the typed field decides.
TEST(JobSpecFromProto, OnOomTypedOrTheOlderString) {
  auto recover = [](void (*set)(v1::JobSpec&)) {
    v1::JobSpec p;
    p.set_name("j");
    set(p);
    Result<train::JobSpec> spec = FromProto(p);
    EXPECT_TRUE(spec.ok()) << spec.status().message();
    return spec.ok() && spec->oom.recover;
  };
  EXPECT_TRUE(recover([](v1::JobSpec& p) { p.set_on_oom_policy(v1::ON_OOM_RECOVER); }));
  EXPECT_FALSE(recover([](v1::JobSpec& p) { p.set_on_oom_policy(v1::ON_OOM_FAIL); }));
  EXPECT_TRUE(recover([](v1::JobSpec& p) { p.set_on_oom("recover"); })) << "an older client";
  EXPECT_FALSE(recover([](v1::JobSpec& p) { p.set_on_oom("fail"); })) << "an older client";
  EXPECT_FALSE(recover([](v1::JobSpec& p) {
    p.set_on_oom("recover");
    p.set_on_oom_policy(v1::ON_OOM_FAIL);
  })) << "the typed field decides";
  EXPECT_FALSE(recover([](v1::JobSpec& p) {
    p.set_on_oom("retry");
    p.set_on_oom_policy(v1::ON_OOM_FAIL);
  })) << "the string is not read when the typed field is set";

  v1::JobSpec future;
  future.set_name("j");
  future.set_on_oom_policy(static_cast<v1::OnOom>(7));
  Result<train::JobSpec> refused = FromProto(future);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(), "on_oom_policy 7 is not known to this agent: use fail or recover");
}

// The agent answers with both, so older clients read the string.
TEST(JobSpecToProto, OnOomBothWays) {
  train::JobRecord record;
  record.spec.name = "j";
  v1::Job job;
  record.spec.oom.recover = true;
  ToProto(record, job);
  EXPECT_EQ(job.spec().on_oom(), "recover");
  EXPECT_EQ(job.spec().on_oom_policy(), v1::ON_OOM_RECOVER);
  record.spec.oom.recover = false;
  ToProto(record, job);
  EXPECT_EQ(job.spec().on_oom(), "fail");
  EXPECT_EQ(job.spec().on_oom_policy(), v1::ON_OOM_FAIL);
}

// What the agent sends back (ToProto of a record) reads back as the spec it
// ran, so a spec shown by `train status` can be started again as it was.
TEST(JobSpecFromProto, ReadsBackWhatToProtoWrote) {
  train::JobRecord record;
  record.spec = FullSpec();
  record.spec.attempt = 3;
  v1::Job job;
  ToProto(record, job);
  EXPECT_EQ(job.spec().attempt(), 3u);
  Result<train::JobSpec> spec = FromProto(job.spec());
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  ExpectSameSpec(*spec, FullSpec());
}

// What the run really got, its last log lines, and every attempt's events.
TEST(JobToProto, WhatTheRunGotAndEveryAttemptsEvents) {
  train::JobRecord record;
  record.spec.name = "j";
  record.spec.command = {"python3", "fake.py", "--max-anchors", "1024"};
  record.run_command = {"python3", "fake.py", "--max-anchors", "768"};
  record.run_env = {{"GPUCTL_RUN_ID", "r2"}, {"GPUCTL_ANCHORS", "768"}};
  record.log_tail = {"Traceback (most recent call last):", "bad \xff byte"};
  train::AttemptRecord first;
  first.attempt = 1;
  first.events = 3;
  record.attempts.push_back(first);
  record.events.resize(1);
  record.events_dropped = 2;
  v1::Job job;
  ToProto(record, job);
  EXPECT_EQ(std::vector<std::string>(job.run_command().begin(), job.run_command().end()), record.run_command);
  EXPECT_EQ(job.spec().command(3), "1024") << "what was asked stays beside it";
  EXPECT_EQ(job.run_env().at("GPUCTL_ANCHORS"), "768");
  ASSERT_EQ(job.log_tail_size(), 2);
  EXPECT_EQ(job.log_tail(1), "bad \xEF\xBF\xBD byte") << "a proto string is UTF-8";
  ASSERT_EQ(job.attempts_size(), 1);
  EXPECT_EQ(job.attempts(0).events(), 3u);
  EXPECT_EQ(job.events_total(), 6u) << "3 earlier, 1 kept and 2 dropped this run";
}

}  // namespace
// A run's argv and environment are any bytes (a checkpoint path, a value
// from --env): the proto's strings, map values included, are UTF-8, so the
// whole answer parses at the client.
TEST(JobToProto, HostileBytesInWhatTheRunGotAreMadeUtf8) {
  train::JobRecord record;
  record.spec.name = "j";
  record.spec.command = {"python3", "fake.py"};
  record.run_command = {"python3", "fake.py", "--ckpt", "/data/\xff\xfe"};
  record.run_env = {{"GPUCTL_RESUME_FROM", "/ckpt/\xc3"}, {"GPUCTL_RUN_ID", "r1"}};
  v1::Job job;
  ToProto(record, job);
  EXPECT_EQ(job.run_command(3), "/data/\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(job.run_env().at("GPUCTL_RESUME_FROM"), "/ckpt/\xEF\xBF\xBD");
  EXPECT_EQ(job.run_env().at("GPUCTL_RUN_ID"), "r1");
  std::string wire;
  ASSERT_TRUE(job.SerializeToString(&wire));
  v1::Job parsed;
  EXPECT_TRUE(parsed.ParseFromString(wire)) << "a string field that is not UTF-8 fails the parse";
}

}  // namespace gpuctl::daemon
