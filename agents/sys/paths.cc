#include "agents/sys/paths.h"

#include <sys/auxv.h>

#include <filesystem>
#include <system_error>

namespace gpuctl::sys {

namespace fs = std::filesystem;

std::string ParentDir(const std::string& path) { return fs::path(path).parent_path().string(); }

std::string JoinPath(const std::string& dir, const std::string& leaf) { return (fs::path(dir) / leaf).string(); }

std::string LexicallyAbsolute(const std::string& path, const std::string& cwd) {
  fs::path p(path);
  if (p.is_relative()) p = fs::path(cwd) / p;
  std::string out = p.lexically_normal().string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();  // "/a/b/" -> "/a/b", "/" kept
  return out;
}

Result<std::string> CurrentDirectory() {
  std::error_code ec;
  std::string cwd = fs::current_path(ec).string();
  if (ec) return ErrnoError("reading the current directory", ec.value());
  return cwd;
}

Result<std::string> AbsolutePath(const std::string& path) {
  std::error_code ec;
  std::string absolute = fs::absolute(path, ec).string();
  if (ec) return ErrnoError("making " + path + " absolute", ec.value());
  return absolute;
}

std::string RunningProgramDir() {
  const char* exec_path = reinterpret_cast<const char*>(::getauxval(AT_EXECFN));
  if (exec_path == nullptr) return "";
  std::error_code ignored;
  return fs::weakly_canonical(exec_path, ignored).parent_path().string();
}

}  // namespace gpuctl::sys
