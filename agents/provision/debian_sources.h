// Debian's apt sources, read for one question: is the contrib component
// enabled? NVIDIA's driver packages for Debian need it. Both formats are
// read: one-line ("deb [opts] URI SUITE COMPONENT...", sources.list and
// *.list) and deb822 stanzas (*.sources, Debian 12's and 13's default).
// Pure: the driver step reads the files.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gpuctl::provision {

struct AptSourceFile {
  std::string name;  // "sources.list", "debian.sources": the format is chosen by the suffix
  std::string text;
};

struct ContribStatus {
  bool enabled = false;
  // When not enabled: a one-line list file that adds contrib for each Debian
  // archive entry with main (same URI, suite and signed-by), to write as
  // /etc/apt/sources.list.d/gpuctl-contrib.list. Empty when there is no such
  // entry to copy (then the host's sources must be fixed by hand).
  std::string contrib_list;
};

ContribStatus DebianContribStatus(const std::vector<AptSourceFile>& files);

}  // namespace gpuctl::provision
