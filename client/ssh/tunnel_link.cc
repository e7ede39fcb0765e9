#include "client/ssh/tunnel_link.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include <libssh/libssh.h>

#include "client/ssh/ssh_session.h"

namespace gpuctl::client::ssh {
namespace {

// Past this many unread bytes the channel is left alone: libssh then stops
// widening the SSH window and the remote side waits (back-pressure).
constexpr size_t kMaxPending = 1 << 20;

}  // namespace

TunnelLink::~TunnelLink() { SshSession::CloseChannel(channel_); }

short TunnelLink::WantedEvents() const {
  short events = 0;
  if (!local_eof_) events |= POLLIN;
  if (!pending_.empty()) events |= POLLOUT;
  return events;
}

void TunnelLink::OnLocalReady(short revents) {
  if (revents & POLLOUT) FlushToLocal();
  // The local side is gone both ways: nobody is left to deliver to (and
  // poll would keep reporting the hang-up).
  if (local_eof_ && (revents & (POLLHUP | POLLERR))) failed_ = true;
  if (local_eof_ || failed_ || !(revents & (POLLIN | POLLHUP | POLLERR))) return;
  char buf[32 * 1024];
  ssize_t n = ::read(local_.get(), buf, sizeof buf);
  if (n > 0) {
    // Blocking write: waits for SSH window space, handling other channels'
    // packets meanwhile (they are buffered and drained next round).
    if (ssh_channel_write(channel_, buf, static_cast<uint32_t>(n)) != n) failed_ = true;
  } else if (n == 0) {
    local_eof_ = true;
    if (ssh_channel_send_eof(channel_) != SSH_OK) failed_ = true;
  } else if (errno != EAGAIN && errno != EINTR) {
    failed_ = true;
  }
}

void TunnelLink::PumpFromChannel() {
  if (failed_) return;
  char buf[32 * 1024];
  while (pending_.size() < kMaxPending) {
    int n = ssh_channel_read_nonblocking(channel_, buf, sizeof buf, 0);
    if (n == SSH_ERROR) {
      failed_ = true;
      return;
    }
    if (n <= 0) break;
    pending_.append(buf, static_cast<size_t>(n));
  }
  FlushToLocal();
  if (!remote_eof_ && pending_.empty() && (ssh_channel_is_eof(channel_) || ssh_channel_is_closed(channel_))) {
    remote_eof_ = true;
    ::shutdown(local_.get(), SHUT_WR);
  }
}

void TunnelLink::FlushToLocal() {
  while (!pending_.empty()) {
    ssize_t n = ::send(local_.get(), pending_.data(), pending_.size(), MSG_NOSIGNAL);
    if (n > 0) {
      pending_.erase(0, static_cast<size_t>(n));
    } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      return;
    } else {
      failed_ = true;
      return;
    }
  }
}

}  // namespace gpuctl::client::ssh
