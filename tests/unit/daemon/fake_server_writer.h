// Stands in for gRPC's side of a server stream, so a test can bind a
// ServerWriteReactor and call its reactions (OnWriteDone, OnCancel, OnDone)
// in any order gRPC may use, and see what the reactor asked for: writes and
// Finish calls. gRPC's own ServerCallbackWriter is an interface provided for
// mocking ("NOTE: ... provided as API only to support mocking").
#pragma once

#include <grpcpp/grpcpp.h>

#include <mutex>
#include <vector>

namespace gpuctl::daemon::test_support {

template <typename Message>
class FakeServerWriter final : public grpc::ServerCallbackWriter<Message> {
 public:
  // What the reactor asked for before now is replayed, as gRPC does when it
  // binds a reactor after the handler returns.
  void Bind(grpc::ServerWriteReactor<Message>* reactor) {
    reactor_ = reactor;
    this->BindReactor(reactor);
  }

  void Finish(grpc::Status status) override {
    std::lock_guard lock(mutex_);
    if (writes_ > writes_done_) finish_during_write_ = true;
    finishes_.push_back(std::move(status));
  }
  void SendInitialMetadata() override {}
  void Write(const Message* message, grpc::WriteOptions /*options*/) override {
    std::lock_guard lock(mutex_);
    ++writes_;
    written_.push_back(*message);
  }
  void WriteAndFinish(const Message* message, grpc::WriteOptions options, grpc::Status status) override {
    Write(message, options);
    Finish(std::move(status));
  }

  // The reactions, as gRPC would call them.
  void WriteDone(bool ok) {
    {
      std::lock_guard lock(mutex_);
      ++writes_done_;
    }
    reactor_->OnWriteDone(ok);
  }
  void Cancel() { reactor_->OnCancel(); }
  // Only after Finish, as gRPC does: the reactor deletes itself.
  void Done() { reactor_->OnDone(); }

  size_t writes() {
    std::lock_guard lock(mutex_);
    return writes_;
  }
  std::vector<grpc::Status> finishes() {
    std::lock_guard lock(mutex_);
    return finishes_;
  }
  std::vector<Message> written() {
    std::lock_guard lock(mutex_);
    return written_;
  }
  bool finish_during_write() {
    std::lock_guard lock(mutex_);
    return finish_during_write_;
  }
  bool write_outstanding() {
    std::lock_guard lock(mutex_);
    return writes_ > writes_done_;
  }

 private:
  grpc::internal::ServerReactor* reactor() override { return reactor_; }
  void CallOnDone() override {}

  grpc::ServerWriteReactor<Message>* reactor_ = nullptr;
  std::mutex mutex_;
  size_t writes_ = 0;
  size_t writes_done_ = 0;
  bool finish_during_write_ = false;
  std::vector<grpc::Status> finishes_;
  std::vector<Message> written_;
};

}  // namespace gpuctl::daemon::test_support
