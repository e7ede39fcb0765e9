// Path text, and where this process is. The pure ones never touch the disk
// (ParentDir, JoinPath, LexicallyAbsolute); the others ask the OS.
#pragma once

#include <string>

#include "common/status.h"

namespace gpuctl::sys {

// "/a/b/c" -> "/a/b", "/a" -> "/", "c" -> "" (std::filesystem's parent_path).
std::string ParentDir(const std::string& path);
// "/a" + "b" -> "/a/b"; an absolute `leaf` replaces `dir` (operator/).
std::string JoinPath(const std::string& dir, const std::string& leaf);
// `path` against `cwd` when relative, then normalised without touching the
// disk ("./a/../b" -> "CWD/b"), with no trailing '/' but for "/" itself.
std::string LexicallyAbsolute(const std::string& path, const std::string& cwd);

// This process's working directory. Errors: from getcwd (e.g. removed).
Result<std::string> CurrentDirectory();
// `path` against the working directory when relative, as it is otherwise
// (not normalised: "a/../b" stays, as a link named a may lead elsewhere).
Result<std::string> AbsolutePath(const std::string& path);
// The directory of the program this process runs: what execve was given
// (PATH already searched), made absolute with links resolved; "" when unknown.
std::string RunningProgramDir();

}  // namespace gpuctl::sys
