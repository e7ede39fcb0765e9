#include "client/local_log_reader.h"

#include <algorithm>

namespace gpuctl::client {
namespace {

// Large enough that a catch-up costs few calls, small enough to stay in cache.
constexpr size_t kPieceBytes = 1 << 20;

}  // namespace

Status LocalLogReader::Read(const v1::LocalLogRange& range, uint64_t offset, const PieceSink& sink) {
  if (!file_ || file_->device() != range.device() || file_->inode() != range.inode()) {
    file_.reset();
    Result<sys::IdentifiedFile> opened = sys::IdentifiedFile::Open(range.path(), range.device(), range.inode());
    if (!opened.ok()) return opened.status();
    file_.emplace(std::move(opened).value());
  }
  if (buffer_.empty()) buffer_.resize(kPieceBytes);
  uint64_t at = offset;
  uint64_t left = range.length();
  while (left > 0) {
    Result<size_t> got = file_->ReadAt(at, buffer_.data(), static_cast<size_t>(std::min<uint64_t>(left, kPieceBytes)));
    if (!got.ok()) return got.status();
    if (*got == 0) {
      return FailedPrecondition(range.path() + " ends at " + std::to_string(at) + ", before the " +
                                std::to_string(offset + range.length()) + " bytes named: it was cut meanwhile");
    }
    if (!sink(at, std::string_view(buffer_.data(), *got))) return Status::Ok();
    at += *got;
    left -= *got;
  }
  return Status::Ok();
}

}  // namespace gpuctl::client
