// A temporary directory removed with its contents when the object dies; the
// base for fixture trees of /proc and /sys.
#pragma once

#include <string>
#include <string_view>

namespace gpuctl::testing {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // Writes `content` to path()/relative, creating parent directories.
  void WriteFile(std::string_view relative, std::string_view content) const;
  void MakeDir(std::string_view relative) const;

 private:
  std::string path_;
};

// A whole file's bytes; empty when it cannot be read (tests then fail on
// what they expected to find in it).
std::string ReadText(const std::string& path);

// The text of a file under GPUCTL_FIXTURES_DIR (the real GPU-host captures).
std::string ReadFixture(std::string_view name);
std::string FixturePath(std::string_view name);

}  // namespace gpuctl::testing
