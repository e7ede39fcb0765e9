#include "daemon/service/where_running_convert.h"

namespace gpuctl::daemon {

v1::WhereKind WhereKindToProto(sys::WhereKind kind) {
  switch (kind) {
    case sys::WhereKind::kBareMetal: return v1::WHERE_KIND_BARE_METAL;
    case sys::WhereKind::kVm: return v1::WHERE_KIND_VM;
    case sys::WhereKind::kDocker: return v1::WHERE_KIND_DOCKER;
    case sys::WhereKind::kPodman: return v1::WHERE_KIND_PODMAN;
    case sys::WhereKind::kLxc: return v1::WHERE_KIND_LXC;
    case sys::WhereKind::kOtherContainer: return v1::WHERE_KIND_OTHER_CONTAINER;
  }
  return v1::WHERE_KIND_UNSPECIFIED;
}

void WhereRunningToProto(const sys::WhereRunning& in, v1::WhereRunning& out) {
  out.set_kind(WhereKindToProto(in.kind));
  out.set_hypervisor(in.hypervisor);
  for (const std::string& why : in.evidence) out.add_evidence(why);
}

}  // namespace gpuctl::daemon
