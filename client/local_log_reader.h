// `gpuctl train logs` on the agent's host: the agent names ranges of the log
// (LogChunk.local) and this reads them from the file itself, as tail would,
// instead of taking every byte through the agent and a socket (five copies
// of each byte against tail's three). It reads only what the caller may read
// anyway; where it cannot (another user's log, a container's path, a file
// renamed and replaced meanwhile), the stream falls back to the agent.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "agents/sys/identified_file.h"
#include "common/status.h"
#include "gpuctl/v1/jobs.pb.h"

namespace gpuctl::client {

class LocalLogReader {
 public:
  // Each piece with its offset in the log; false stops the read (Ok).
  using PieceSink = std::function<bool(uint64_t offset, std::string_view bytes)>;

  // Hands `range` (from `offset`) to `sink` in pieces. An error when the
  // file cannot be opened, is not the one named, or holds fewer bytes than
  // named (cut meanwhile): what was handed over before it stands.
  Status Read(const v1::LocalLogRange& range, uint64_t offset, const PieceSink& sink);

 private:
  // The file last read, kept open while ranges name it: a renamed log (a
  // relaunch keeps it aside) is still this file.
  std::optional<sys::IdentifiedFile> file_;
  std::string buffer_;
};

}  // namespace gpuctl::client
