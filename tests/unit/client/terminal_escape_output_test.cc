// Issue 20 with literals: what a person sees where a job, a node or the
// agent put control characters into a string.
#include <gtest/gtest.h>

#include <sstream>

#include "client/commands/command_context.h"
#include "client/output/event_text.h"
#include "client/output/fleet_text.h"
#include "client/output/health_text.h"
#include "client/output/job_text.h"
#include "client/output/probe_text.h"
#include "client/output/table.h"

namespace gpuctl::client {
namespace {

TEST(TerminalEscape, TrainStatusShowsAnOscTitleAsText) {
  v1::Job job;
  job.mutable_spec()->set_name("dflash");
  job.set_state(v1::JOB_STATE_FAILED);
  job.set_state_reason("exited: \x1b]0;pwned\x07");
  job.set_log_path("/srv/\xe2\x80\xaegol.txt");
  std::string text = JobToText(job, 0);
  EXPECT_NE(text.find("state:      failed (exited: \\x1b]0;pwned\\x07)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("log:        0 B in /srv/\\u202egol.txt\n"), std::string::npos) << text;
}

TEST(TerminalEscape, AnExceptionLineCannotClearTheScreenOrHideText) {
  v1::JobEvent e;
  e.set_kind("traceback");
  e.set_offset(7);
  e.set_message("RuntimeError: \x1b[2J\x1b[8mhidden\rfake");
  e.set_exception_type("Evil\x1b[0m");
  EXPECT_EQ(JobEventToText(e),
            "traceback at offset 7: Evil\\x1b[0m: RuntimeError: \\x1b[2J\\x1b[8mhidden\\rfake");
}

TEST(TerminalEscape, ALongMessageIsCutWhereACharacterStarts) {
  v1::JobEvent e;
  e.set_kind("traceback");
  e.set_message(std::string(156, 'a') + "\xc3\xbc\xc3\xbc");  // "ü" at bytes 156-157 and 158-159, 160 bytes
  e.set_message(e.message() + "z");                              // 161: cut
  EXPECT_EQ(JobEventToText(e), "traceback at offset 0: " + std::string(156, 'a') + "...");
}

TEST(TerminalEscape, QueueAndStartLinesEscapeWhatTheAgentSaid) {
  v1::ListJobsResponse list;
  v1::Job* job = list.add_jobs();
  job->mutable_spec()->set_name("q");
  job->set_state(v1::JOB_STATE_QUEUED);
  job->set_queue_position(1);
  job->set_waiting_for("gpu 0\n  #2 fake waits for nothing");
  std::string text = JobListToText(list, 0);
  EXPECT_NE(text.find("queued:\n  #1 q waits for gpu 0\\n  #2 fake waits for nothing\n"), std::string::npos) << text;
  EXPECT_EQ(JobStartedText(*job, "").substr(0, 65),
            "queued job q (#1): waiting for gpu 0\\n  #2 fake waits for nothing");
  job->set_state(v1::JOB_STATE_STOPPED);
  job->set_state_reason("stopped\x1b[8m");
  EXPECT_EQ(JobStoppedText(*job, 0), "job q: stopped (stopped\\x1b[8m)\n");
}

TEST(TerminalEscape, EventsShowC1AndBidiControlsEscaped) {
  v1::AgentEvent e;
  e.set_time_unix_ms(0);
  e.set_kind("job_event");
  e.set_job("dflash");
  e.set_message("csi \xc2\x9b" "2J rlo \xe2\x80\xae" "cba esc \x1b[8m bad \xff line\nbreak");
  std::string line = AgentEventToText(e);
  EXPECT_EQ(line.substr(line.find("job_event")),
            "job_event      dflash csi \\u009b2J rlo \\u202ecba esc \\x1b[8m bad \\xff line break\n");
}

TEST(TerminalEscape, HealthEscapesHostStringsAndGpuNamesAndKeepsColumnsAligned) {
  v1::HealthSnapshot s;
  s.mutable_host()->set_hostname("gpu-1\x1b]0;pwned\x07");
  s.mutable_host()->set_os_release("Ubuntu\xc2\x9b");
  v1::Gpu* g = s.add_gpus();
  g->set_name("\x1b[8mH200");
  s.set_gpu_error("partial\x1b[2J");
  std::string text = HealthToText(s);
  EXPECT_EQ(text.substr(0, text.find("  kernel")), "gpu-1\\x1b]0;pwned\\x07  Ubuntu\\u009b");
  EXPECT_NE(text.find("GPU  NAME         MEMORY"), std::string::npos) << text;
  EXPECT_NE(text.find("0    \\x1b[8mH200  -"), std::string::npos) << text;
  EXPECT_NE(text.find("warning: partial\\x1b[2J\n"), std::string::npos) << text;
}

TEST(TerminalEscape, TableCellsAreEscapedAndMeasuredAsShown) {
  Table table({"NODE", "NAME", "X"});
  table.AddRow({"a", "\x1b[2J", "1"});
  table.AddRow({"b", "Ünï", "2"});
  table.AddSpanningRow("c", "error: \xe2\x80\xae\nnext");
  EXPECT_EQ(table.Render(),
            "NODE  NAME     X\n"
            "a     \\x1b[2J  1\n"
            "b     Ünï      2\n"
            "c     error: \\u202e\\nnext\n");
}

TEST(TerminalEscape, FirstLineOfANodeErrorIsEscaped) {
  EXPECT_EQ(FirstLine("ssh: \x1b]0;pwned\x07 banner\nsecond"), "ssh: \\x1b]0;pwned\\x07 banner");
}

TEST(TerminalEscape, ProbeLinesAndNotesAreEscaped) {
  v1::HostProbe p;
  p.set_os_pretty_name("Debian\x1b[8m");
  p.add_notes("note \xc2\x9b" "1m");
  std::string text = ProbeToText(p);
  EXPECT_NE(text.find("os        Debian\\x1b[8m, host\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  - note \\u009b1m\n"), std::string::npos) << text;
}

TEST(TerminalEscape, AnErrorFromTheAgentKeepsItsLinesButNotItsEscapes) {
  std::ostringstream out, err;
  Console console{out, err, true};
  CommandContext ctx{.global = {}, .console = console, .env_agent = {}, .args = {}};
  ctx.Fail(Status(ErrorCode::kNotFound, "no job \x1b]0;pwned\x07\nhint: gpuctl train list"));
  EXPECT_EQ(err.str(), "gpuctl: no job \\x1b]0;pwned\\x07\nhint: gpuctl train list\n");
}

}  // namespace
}  // namespace gpuctl::client
