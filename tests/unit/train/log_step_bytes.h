// The bytes a LogStep hands over: its data, or, for a step that names a range
// of the file (LogFollowOptions::local_ranges), what that file holds there,
// read as `gpuctl train logs` on the agent's host reads it. Shared by the
// follower tests so that each can run through the agent and locally alike.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "agents/sys/identified_file.h"
#include "agents/train/log_follower.h"

namespace gpuctl::train::test_support {

inline std::string StepBytes(const LogStep& step) {
  if (!step.local) return step.data;
  EXPECT_TRUE(step.data.empty()) << "a step that names a range carries no bytes of its own";
  Result<sys::IdentifiedFile> file = sys::IdentifiedFile::Open(step.local->path, step.local->device,
                                                               step.local->inode);
  if (!file.ok()) {
    ADD_FAILURE() << file.status().message();
    return {};
  }
  std::string bytes(step.local->length, '\0');
  Result<size_t> got = file->ReadAt(step.offset, bytes.data(), bytes.size());
  EXPECT_TRUE(got.ok() && *got == bytes.size()) << "the range is not all there";
  bytes.resize(got.ok() ? *got : 0);
  return bytes;
}

}  // namespace gpuctl::train::test_support
