// File operations shared by the cgroup drivers and event waiters, with
// errnos mapped to the codes cgroup_driver.h promises.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "agents/sys/cgroup_parsers.h"
#include "common/status.h"

namespace gpuctl::sys {

// ENOENT/ESRCH -> kNotFound, EACCES/EPERM -> kPermissionDenied, EEXIST ->
// kAlreadyExists, EINVAL -> kInvalidArgument, EBUSY/ENOTEMPTY/EOPNOTSUPP ->
// kFailedPrecondition, anything else kIo. The message is "what: strerror".
Status CgroupErrno(const std::string& what, int err);

// mount + path for a cgroup path as cgroup_driver.h defines it ("/" or
// "/a/b"). Errors: kInvalidArgument (relative, empty, "." or ".." parts, NUL).
Result<std::string> JoinCgroupPath(const std::string& mount, std::string_view path);

// The parent cgroup path: "/a/b" -> "/a", "/a" -> "/". "/" has no parent
// (kInvalidArgument).
Result<std::string> ParentCgroupPath(std::string_view path);

// Whole control file. Errors as CgroupErrno.
Result<std::string> ReadControlFile(const std::string& file);

// One write(2) of `value` (the kernel takes one value per write) into an
// existing file: never creates one, so a missing cgroup reads as kNotFound.
Status WriteControlFile(const std::string& file, std::string_view value);

bool ControlFileExists(const std::string& file);

// Read and parse, with the file named in parse errors (kInvalidArgument).
Result<uint64_t> ReadNumberFile(const std::string& file);
Result<FlatKeyed> ReadKeyedFile(const std::string& file);
Result<std::vector<int64_t>> ReadProcsFile(const std::string& file);

// mkdir / rmdir with the mapping above.
Status MakeCgroupDir(const std::string& dir);
Status RemoveCgroupDir(const std::string& dir);

// The names of the child cgroups in `dir` (in a cgroup file system every
// subdirectory is one), sorted. Errors as CgroupErrno.
Result<std::vector<std::string>> ChildCgroupNames(const std::string& dir);

}  // namespace gpuctl::sys
