// The anchor budget a job is started with: gpuctl passes it to the training
// script as a flag (by default --max-anchors N), so that a remediation can
// lower it and restart the job without the user editing the command.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/job_rules.h"
#include "common/status.h"

namespace gpuctl::train {

// Reads a user-given anchor count: a whole number above 0, digits only
// ("1024"; not "0", "-5", "1.5", "1e3", "1k", " 1024"). The shared rule
// (common/job_rules.h).
using ::gpuctl::ParseAnchors;

// Returns `argv` with `flag` set to `anchors`, never duplicated:
//  - where argv already carries the flag, as "--max-anchors 1024" or
//    "--max-anchors=1024", the first occurrence gets the new value in the same
//    form and place, and every later occurrence is removed with its value;
//  - a flag at the end of argv, or followed by another option ("-x", "--y"),
//    has no value: the value is inserted after it;
//  - otherwise "flag N" is appended at the end.
// argv[0] (the program) is never taken for the flag, and "--max-anchors-x" or
// "--max-anchors2" are other flags. An empty `flag` returns argv unchanged.
std::vector<std::string> ApplyAnchorsFlag(std::vector<std::string> argv, uint64_t anchors,
                                          std::string_view flag = "--max-anchors");

}  // namespace gpuctl::train
