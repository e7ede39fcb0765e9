// A build in a container is governed like one on the host: its compiles
// run in a memory cgroup of their own, made beneath the container's cgroup
// as the host sees it (so the container's limit holds them too), which the
// build governor reads, pauses and kills from the host.
//
// The cgroup cannot be joined from inside (the container may not see the
// host's cgroup tree, or may see it read-only), so the agent places the job
// from outside, before the command starts. The job's wrapper writes its own
// pid (as the container numbers it) to GATE.pid and waits for GATE; the
// agent moves that process into the new cgroup and writes "ok" to GATE, or
// the reason it could not, which the wrapper prints and exits 125 on: a
// build is never left to run ungoverned by accident.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "agents/sys/cgroup_driver.h"
#include "agents/sys/process_control.h"
#include "agents/train/job_record.h"

namespace gpuctl::train {

// The container's own cgroup from the cgroup of one of its processes: the
// path through its first "lxc.payload.NAME" component (LXC 4 and later) or
// "lxc/NAME" (Proxmox, where the container's view starts below it at
// /lxc/200/ns; LXC 3). nullopt: not a container's process.
std::optional<std::string> ContainerCgroupOf(std::string_view process_cgroup);

// Once the wrapper waits at record.cgroup_gate: makes the build's cgroup
// (CONTAINER/gpuctl-NAME@RUN) with the build's limit, capped by the room the
// container's own limit leaves, moves the wrapper into it, sets
// record.cgroup (and the capped limit), and opens the gate. A failure is
// written to the gate instead, and the gate is cleared. True when the
// record changed.
bool OpenContainerBuildGate(JobRecord& record, sys::ProcessControl& processes, sys::CgroupDriver& cgroups);

}  // namespace gpuctl::train
