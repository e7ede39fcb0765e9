// SshSession's uploads: SFTP to a temporary name, then a rename into place.
#include <fcntl.h>
#include <unistd.h>

#include <libssh/libssh.h>
#include <libssh/sftp.h>

#include "agents/sys/files.h"
#include "client/ssh/shell_quote.h"
#include "client/ssh/ssh_session.h"

namespace gpuctl::client::ssh {
namespace {

// OpenSSH's sftp-server takes writes of up to 255 KiB; fewer, larger writes
// mean fewer round trips.
constexpr size_t kWriteChunk = 128 * 1024;

struct SftpGuard {
  sftp_session sftp;
  ~SftpGuard() {
    if (sftp) sftp_free(sftp);
  }
};

}  // namespace

Status SshSession::UploadFile(const std::string& local_path, const std::string& remote_path, unsigned mode) {
  Result<std::string> content = sys::ReadWholeFile(local_path);
  if (!content.ok()) return content.status().Wrap("uploading " + local_path);
  return UploadBytes(*content, remote_path, mode);
}

Status SshSession::UploadBytes(std::string_view content, const std::string& remote_path, unsigned mode) {
  if (remote_path.empty() || remote_path.front() != '/') {
    return InvalidArgument("upload target must be an absolute path, got '" + remote_path + "'");
  }
  auto fail = [&](const std::string& what) {
    return IoError("uploading to " + remote_path + " on " + description_ + ": " + what + ": " +
                   ssh_get_error(session_));
  };
  SftpGuard guard{sftp_new(session_)};
  if (!guard.sftp) return fail("cannot start SFTP");
  if (sftp_init(guard.sftp) != SSH_OK) return fail("the server refused SFTP");

  std::string temp = remote_path + ".gpuctl-upload";
  sftp_file file = sftp_open(guard.sftp, temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, static_cast<mode_t>(mode));
  if (!file) return fail("cannot create " + temp);
  size_t written = 0;
  while (written < content.size()) {
    size_t chunk = std::min(kWriteChunk, content.size() - written);
    ssize_t n = sftp_write(file, content.data() + written, chunk);
    if (n <= 0) {
      sftp_close(file);
      sftp_unlink(guard.sftp, temp.c_str());
      return fail("write failed after " + std::to_string(written) + " bytes");
    }
    written += static_cast<size_t>(n);
  }
  if (sftp_close(file) != SSH_OK) return fail("closing " + temp + " failed");
  // The open's mode is filtered by the server's umask; set it exactly.
  if (sftp_chmod(guard.sftp, temp.c_str(), static_cast<mode_t>(mode)) != SSH_OK) return fail("chmod failed");
  // libssh renames with posix-rename@openssh.com where offered (replaces
  // atomically); plain SFTP rename refuses an existing target.
  if (sftp_rename(guard.sftp, temp.c_str(), remote_path.c_str()) == SSH_OK) return Status::Ok();
  return RenameOver(temp, remote_path);
}

Status SshSession::RenameOver(const std::string& from, const std::string& to) {
  Result<ExecResult> moved = Exec("mv -f " + ShellQuote(from) + " " + ShellQuote(to));
  if (!moved.ok()) return moved.status();
  if (moved->exit_status != 0) {
    return IoError("cannot move " + from + " to " + to + " on " + description_ + ": " + moved->err);
  }
  return Status::Ok();
}

}  // namespace gpuctl::client::ssh
