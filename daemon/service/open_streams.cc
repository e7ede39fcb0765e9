#include "daemon/service/open_streams.h"

#include <vector>

namespace gpuctl::daemon {

void OpenStreams::Add(EndableStream& stream) {
  bool finish = false;
  grpc::Status status;
  {
    std::lock_guard lock(mutex_);
    if (!ended_) {
      open_.insert(&stream);
      return;
    }
    status = end_status_;
    finish = stream.MarkEnded(status);
  }
  if (finish) stream.FinishEnded();
}

void OpenStreams::Remove(EndableStream& stream) {
  std::lock_guard lock(mutex_);
  open_.erase(&stream);
}

void OpenStreams::EndAll(const grpc::Status& status) {
  std::vector<EndableStream*> to_finish;
  {
    std::lock_guard lock(mutex_);
    if (ended_) return;
    ended_ = true;
    end_status_ = status;
    // Decided under the lock, so none of them can be removed (and freed)
    // while it is decided; finished after it, so an OnDone that gRPC runs
    // at once cannot wait on this lock.
    for (EndableStream* stream : open_) {
      if (stream->MarkEnded(status)) to_finish.push_back(stream);
    }
  }
  for (EndableStream* stream : to_finish) stream->FinishEnded();
}

size_t OpenStreams::size() const {
  std::lock_guard lock(mutex_);
  return open_.size();
}

}  // namespace gpuctl::daemon
