// The dump's pure pieces: the innermost frame of py-spy's output, and where
// py-spy is looked for (never inside a container's paths on the host).
#include "agents/train/stack_dump.h"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include "tests/fakes/fake_clock.h"
#include "tests/fakes/fake_command_runner.h"
#include "tests/fakes/temp_dir.h"

namespace gpuctl::train {
namespace {

TEST(TopPythonFrame, IsTheFirstFrameOfTheFirstThread) {
  const std::string out =
      "Process 12571: /venv/bin/python -u train.py\n"
      "Python v3.11.7 (/usr/bin/python3.11)\n"
      "\n"
      "Thread 12571 (idle): \"MainThread\"\n"
      "    all_reduce (torch/distributed/distributed_c10d.py:3075)\n"
      "    main (train.py:40)\n"
      "Thread 12600 (idle): \"pt_watchdog\"\n"
      "    wait (threading.py:320)\n";
  EXPECT_EQ(TopPythonFrame(out), "all_reduce (torch/distributed/distributed_c10d.py:3075)");
  EXPECT_EQ(TopPythonFrame("Process 1: x\nError: no such process"), "");
  EXPECT_EQ(TopPythonFrame(""), "");
}

TEST(FindPySpy, TheJobsVenvForAHostJobOnlyThenThePath) {
  testing::TempDir dir;
  dir.WriteFile("venv/bin/py-spy", "#!/bin/sh\n");
  ASSERT_EQ(chmod((dir.path() + "/venv/bin/py-spy").c_str(), 0755), 0);
  sys::HostFs fs(dir.path());
  testing::FakeCommandRunner runner;
  testing::FakeClock clock;
  ProcStackDumper dumper(fs, runner, clock, /*agent_path=*/"/nonexistent");
  JobRecord host;
  host.spec.command = {dir.path() + "/venv/bin/python", "train.py"};
  RunProcess p;
  p.argv = {dir.path() + "/venv/bin/python", "train.py"};
  EXPECT_EQ(dumper.FindPySpy(host, p), dir.path() + "/venv/bin/py-spy");
  JobRecord by_env;
  by_env.spec.env["VIRTUAL_ENV"] = dir.path() + "/venv";
  EXPECT_EQ(dumper.FindPySpy(by_env, RunProcess{}), dir.path() + "/venv/bin/py-spy");
  // The same paths in a container job are the container's: not looked in here.
  JobRecord contained = host;
  contained.spec.container = "200";
  contained.spec.env["VIRTUAL_ENV"] = dir.path() + "/venv";
  EXPECT_EQ(dumper.FindPySpy(contained, p), "");
}

}  // namespace
}  // namespace gpuctl::train
