// A job's directory is written by the job, and the jobs directory may be
// reached by anything that can plant a link: JobStore lists only real
// directories and removes links as links, never what they point at.
#include <gtest/gtest.h>

#include <filesystem>

#include "agents/train/job_store.h"
#include "tests/fakes/temp_dir.h"

namespace gpuctl::train {
namespace {

namespace fs = std::filesystem;
using gpuctl::testing::TempDir;

JobRecord Record(const std::string& name) {
  JobRecord r;
  r.spec.name = name;
  r.spec.command = {"python", "train.py"};
  r.state = JobState::kRunning;
  r.created_unix_ms = 1000;
  return r;
}

TEST(JobStoreLinks, LoadAllSkipsALinkToAJobDirectory) {
  TempDir dir;
  JobStore store(dir.path());
  ASSERT_TRUE(store.Prepare("real").ok());
  ASSERT_TRUE(store.Save(Record("real")).ok());
  fs::create_directory_symlink(store.JobDir("real"), store.JobDir("alias"));
  std::vector<JobRecord> all = store.LoadAll();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].spec.name, "real");
}

TEST(JobStoreLinks, RemoveTakesTheLinksAJobPlantedButNotTheirTargets) {
  TempDir dir;
  dir.WriteFile("outside/precious.txt", "keep");
  JobStore store(dir.path());
  ASSERT_TRUE(store.Prepare("j").ok());
  ASSERT_TRUE(store.Save(Record("j")).ok());
  dir.WriteFile("jobs/j/ckpt/step1/weights.bin", "w");
  fs::create_directory_symlink(dir.path() + "/outside", store.JobDir("j") + "/to_outside");
  fs::create_symlink(dir.path() + "/outside/precious.txt", store.JobDir("j") + "/ckpt/to_file");
  ASSERT_TRUE(store.Remove("j").ok());
  EXPECT_FALSE(fs::exists(store.JobDir("j")));
  EXPECT_TRUE(fs::exists(dir.path() + "/outside/precious.txt"));
  EXPECT_TRUE(store.LoadAll().empty());
}

}  // namespace
}  // namespace gpuctl::train
