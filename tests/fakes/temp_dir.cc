#include "tests/fakes/temp_dir.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#ifndef GPUCTL_FIXTURES_DIR_FOR_FAKES
#define GPUCTL_FIXTURES_DIR_FOR_FAKES ""
#endif

namespace gpuctl::testing {

namespace fs = std::filesystem;

TempDir::TempDir() {
  std::string pattern = (fs::temp_directory_path() / "gpuctl-test-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

void TempDir::WriteFile(std::string_view relative, std::string_view content) const {
  fs::path p = fs::path(path_) / relative;
  fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary);
  out << content;
  if (!out) throw std::runtime_error("cannot write " + p.string());
}

void TempDir::MakeDir(std::string_view relative) const {
  fs::create_directories(fs::path(path_) / relative);
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string FixturePath(std::string_view name) {
  return (fs::path(GPUCTL_FIXTURES_DIR_FOR_FAKES) / name).string();
}

std::string ReadFixture(std::string_view name) {
  const std::string path = FixturePath(name);
  if (!std::ifstream(path)) throw std::runtime_error("missing fixture " + path +
                                                     " (the tests expect ../shared/fixtures beside the checkout)");
  return ReadText(path);
}

}  // namespace gpuctl::testing
