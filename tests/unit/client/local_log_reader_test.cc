// LocalLogReader on real files: a range in pieces at their offsets, a file cut
// under it, a path that became another file, and a kept file read on after a
// rename.
#include "client/local_log_reader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "agents/sys/files.h"
#include "tests/fakes/temp_dir.h"

namespace gpuctl::client {
namespace {

using testing::TempDir;

v1::LocalLogRange RangeOf(const std::string& path, uint64_t length) {
  Result<sys::FileIdentity> id = sys::RegularFileIdentity(path);
  EXPECT_TRUE(id.ok()) << id.status().message();
  v1::LocalLogRange range;
  range.set_path(path);
  range.set_device(id.ok() ? id->device : 0);
  range.set_inode(id.ok() ? id->inode : 0);
  range.set_length(length);
  return range;
}

struct Pieces {
  std::vector<uint64_t> offsets;
  std::string bytes;
  size_t stop_after = SIZE_MAX;  // pieces
  LocalLogReader::PieceSink Sink() {
    return [this](uint64_t offset, std::string_view piece) {
      offsets.push_back(offset);
      bytes += piece;
      return offsets.size() < stop_after;
    };
  }
};

std::string Lines(size_t bytes) {
  std::string text;
  for (int i = 0; text.size() < bytes; ++i) text += "step " + std::to_string(i) + " | loss 2.5\n";
  text.resize(bytes);
  return text;
}

TEST(LocalLogReader, ARangeComesInPiecesAtTheirOffsets) {
  TempDir dir;
  const std::string content = Lines(3 * 1024 * 1024 + 777);  // past two 1 MiB pieces
  dir.WriteFile("output.log", content);
  const std::string log = dir.path() + "/output.log";
  LocalLogReader reader;
  Pieces got;
  const uint64_t from = 100;
  Status s = reader.Read(RangeOf(log, content.size() - from), from, got.Sink());
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(got.bytes == content.substr(from)) << "the bytes differ";
  ASSERT_EQ(got.offsets.size(), 4u);
  uint64_t at = from;
  for (uint64_t offset : got.offsets) {
    EXPECT_EQ(offset, at);
    at = offset + (1 << 20);
  }

  Pieces first_only;
  first_only.stop_after = 1;
  EXPECT_TRUE(reader.Read(RangeOf(log, content.size()), 0, first_only.Sink()).ok());
  EXPECT_EQ(first_only.offsets.size(), 1u) << "the sink said stop";
}

TEST(LocalLogReader, AFileCutUnderTheRangeIsAnErrorAfterWhatIsThere) {
  TempDir dir;
  dir.WriteFile("output.log", "step 1\nstep 2\n");
  const std::string log = dir.path() + "/output.log";
  v1::LocalLogRange range = RangeOf(log, 14);
  ASSERT_EQ(::truncate(log.c_str(), 7), 0);  // logrotate's copytruncate, half way
  LocalLogReader reader;
  Pieces got;
  Status s = reader.Read(range, 0, got.Sink());
  EXPECT_EQ(s.code(), ErrorCode::kFailedPrecondition);
  EXPECT_EQ(got.bytes, "step 1\n");
}

TEST(LocalLogReader, APathThatBecameAnotherFileIsRefusedButAFileHeldIsReadOn) {
  TempDir dir;
  dir.WriteFile("output.log", "attempt 1 line 1\nattempt 1 line 2\n");
  const std::string log = dir.path() + "/output.log";
  v1::LocalLogRange first = RangeOf(log, 17);
  v1::LocalLogRange rest = first;
  rest.set_length(17);

  LocalLogReader holding;
  Pieces got;
  ASSERT_TRUE(holding.Read(first, 0, got.Sink()).ok());
  // The relaunch keeps the log aside and the next run writes a new one.
  ASSERT_EQ(std::rename(log.c_str(), (dir.path() + "/output.1.log").c_str()), 0);
  dir.WriteFile("output.log", "attempt 2 is another file entirely\n");

  ASSERT_TRUE(holding.Read(rest, 17, got.Sink()).ok()) << "the file held is still attempt 1's";
  EXPECT_EQ(got.bytes, "attempt 1 line 1\nattempt 1 line 2\n");

  // Another file named next (the next attempt's log): read from it, not
  // from the file held.
  v1::LocalLogRange next = RangeOf(log, 35);
  Pieces of_next;
  ASSERT_TRUE(holding.Read(next, 0, of_next.Sink()).ok());
  EXPECT_EQ(of_next.bytes, "attempt 2 is another file entirely\n");

  LocalLogReader fresh;
  Pieces none;
  EXPECT_EQ(fresh.Read(rest, 17, none.Sink()).code(), ErrorCode::kFailedPrecondition);
  EXPECT_TRUE(none.bytes.empty()) << "attempt 2's bytes were passed off as attempt 1's";
}

}  // namespace
}  // namespace gpuctl::client
