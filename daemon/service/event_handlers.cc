// The Agent service's event RPC: a stream fed by the agent's EventLog.
#include "daemon/service/agent_service.h"
#include "daemon/service/event_stream.h"

namespace gpuctl::daemon {

grpc::ServerWriteReactor<v1::AgentEvent>* AgentService::WatchEvents(grpc::CallbackServerContext* /*context*/,
                                                                     const v1::WatchEventsRequest* request) {
  return new EventStreamReactor(events_, request->after_seq(), request->follow(), &streams_);
}

}  // namespace gpuctl::daemon
