// Paths beneath a container's root filesystem, which the container's own
// root user controls. The agent resolves them as if that root were "/", so
// no link planted inside (a jobs directory pointing at /etc, a log pointing
// at a host key) can lead the host agent to a host file.
#pragma once

#include <optional>
#include <string>

#include "agents/sys/unique_fd.h"
#include "common/status.h"

namespace gpuctl::sys {

// Registers a root. "{vmid}" in it matches any one path component, so the
// agent's --lxc-rootfs template covers every container at once.
void AddConfinedRoot(std::string pattern);

struct ConfinedPath {
  std::string root;  // the host path of the root, e.g. /var/lib/lxc/200/rootfs
  std::string rest;  // the path inside it, relative, e.g. var/lib/gpuctl/jobs/a/output.log
};
// The root that confines path, or nullopt: the path is then the host's own.
std::optional<ConfinedPath> FindConfinedRoot(const std::string& path);

// Opens path (O_CLOEXEC is added). Beneath a confined root it is resolved
// inside that root (openat2 with RESOLVE_IN_ROOT; on kernels without
// openat2, a walk that refuses every link and every ".."); elsewhere it is
// a plain open. On failure errno holds the cause.
Result<UniqueFd> OpenPath(const std::string& path, int flags, unsigned mode = 0);

// The directory holding path, opened O_RDONLY|O_DIRECTORY the same way, and
// the name of path in it: for the *at calls that create, rename and remove.
struct ParentDir {
  UniqueFd fd;
  std::string leaf;
};
Result<ParentDir> OpenParentDir(const std::string& path);

// For tests: whether the walk, not openat2, is used (as on old kernels).
void ForceConfinedWalkForTesting(bool walk);

}  // namespace gpuctl::sys
