// One forwarded connection of a SocketTunnel: a local socket and its SSH
// channel, with the bytes the local side has not taken yet. Used only on
// the tunnel's thread.
#pragma once

#include <string>

#include "agents/sys/unique_fd.h"

struct ssh_channel_struct;

namespace gpuctl::client::ssh {

class TunnelLink {
 public:
  TunnelLink(sys::UniqueFd local, ssh_channel_struct* channel) : local_(std::move(local)), channel_(channel) {}
  ~TunnelLink();
  TunnelLink(const TunnelLink&) = delete;
  TunnelLink& operator=(const TunnelLink&) = delete;

  int local_fd() const { return local_.get(); }
  // POLLIN while the local side may still send, POLLOUT while bytes wait for it.
  short WantedEvents() const;
  // Local socket readable or writable: forward what it sent to the channel,
  // and flush what waits for it.
  void OnLocalReady(short revents);
  // Reads what the channel has (without blocking) and passes it on; after
  // the remote end's EOF, half-closes the local socket.
  void PumpFromChannel();
  // Both directions finished, or either side failed.
  bool done() const { return failed_ || (local_eof_ && remote_eof_ && pending_.empty()); }

 private:
  void FlushToLocal();

  sys::UniqueFd local_;
  ssh_channel_struct* channel_;
  std::string pending_;  // from the channel, not yet written to the local socket
  bool local_eof_ = false;
  bool remote_eof_ = false;
  bool failed_ = false;
};

}  // namespace gpuctl::client::ssh
