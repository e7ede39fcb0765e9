#include "daemon/service/provision_stream.h"

#include <thread>

#include "daemon/service/provision_convert.h"
#include "daemon/service/status_convert.h"

namespace gpuctl::daemon {

ProvisionStreamReactor::ProvisionStreamReactor(provision::Provisioner& provisioner,
                                               provision::ProvisionOptions options, OpenStreams* streams)
    : StreamWriter(streams) {
  Retain();  // the run's thread lets go when it is done
  std::thread([this, &provisioner, options = std::move(options)] {
    auto result = provisioner.Run(
        options, [this](const provision::StepReport& report) { Push(ToProtoEvent(report)); }, &cancel_);
    if (!result.ok()) {
      Close(ToGrpcStatus(result.status()));
    } else {
      Push(ToProtoEvent(*result));
      Close(grpc::Status::OK);
    }
    Drop();
  }).detach();
  Start();
}

void ProvisionStreamReactor::Push(v1::ProvisionEvent event) {
  if (cancel_) return;  // no one to send it to
  Update([&] { queue_.push_back(std::move(event)); });
}

void ProvisionStreamReactor::Close(const grpc::Status& status) {
  Update([&] { closed_ = status; });
}

auto ProvisionStreamReactor::Produce(v1::ProvisionEvent& out, grpc::Status& end) -> Next {
  if (!queue_.empty()) {
    out = std::move(queue_.front());
    queue_.pop_front();
    return Next::kWrite;
  }
  if (closed_) {
    end = *closed_;
    return Next::kEnd;
  }
  return Next::kIdle;
}

}  // namespace gpuctl::daemon
