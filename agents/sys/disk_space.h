// A full disk, met on purpose. A job's log can fill the disk that holds the
// agent's state; the records that say how the job ended must still be
// written. A spare file is space set aside while there is room: on a full
// disk the record is written over the spare's own blocks (no new ones are
// needed) and renamed into place.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace gpuctl::sys {

// Makes `spare` hold at least `bytes` (of spaces). One fstat when it does
// already; otherwise it is rewritten at twice that, so a slowly growing
// record does not rewrite it at every save. Errors from the filesystem.
Status KeepSpareFile(const std::string& spare, size_t bytes);

// Writes `content` over the start of `spare`, cuts it to that length
// (shrinking needs no new blocks), fsyncs, and renames it over `path`. kFailedPrecondition when there is no spare or it
// is too small; other errors from the filesystem. Like WriteFileAtomic,
// readers see the old or the new content.
Status WriteFileFromSpare(const std::string& spare, const std::string& path, std::string_view content);

// Allocates `bytes` of `fd` from `offset` without changing its size
// (fallocate FALLOC_FL_KEEP_SIZE): later writes there need no new blocks.
// Errors from the filesystem (kIo, or one that cannot preallocate).
Status AllocateAhead(int fd, uint64_t offset, uint64_t bytes);

// Whether `status` is a write that failed for want of space (ENOSPC, EDQUOT).
bool IsOutOfSpace(const Status& status);

// Bytes an unprivileged writer may still use on the filesystem holding
// `path` (statvfs f_bavail); nullopt when it cannot be read.
std::optional<uint64_t> FreeBytes(const std::string& path);

}  // namespace gpuctl::sys
