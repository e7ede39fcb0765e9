// The human form of a host probe: a labelled line per topic, then the notes.
#pragma once

#include <string>

#include "gpuctl/v1/probe.pb.h"

namespace gpuctl::client {

std::string ProbeToText(const v1::HostProbe& probe);

}  // namespace gpuctl::client
