"""A gRPC client that knows nothing of gpuctl but what server reflection
tells it, as grpcurl does: it resolves gpuctl.v1.Agent, the file that
defines it and every import, builds the message classes from those
descriptors, then calls GetHealth and WatchHealth and checks the values.

usage: reflection_client.py unix:/path/to/gpuctld.sock
"""
import sys

import grpc
from google.protobuf import descriptor_pool, message_factory
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase,
)


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def mem_total_bytes():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    fail("no MemTotal in /proc/meminfo")


def main():
    channel = grpc.insecure_channel(sys.argv[1])
    database = ProtoReflectionDescriptorDatabase(channel)
    services = database.get_services()
    if "gpuctl.v1.Agent" not in services:
        fail("reflection lists %s, without gpuctl.v1.Agent" % services)
    pool = descriptor_pool.DescriptorPool(database)

    service = pool.FindServiceByName("gpuctl.v1.Agent")
    agent_file = pool.FindFileByName("gpuctl/v1/agent.proto")
    if service.file.name != agent_file.name:
        fail("gpuctl.v1.Agent is defined in %s" % service.file.name)
    imports = [d.name for d in agent_file.dependencies]
    for name in imports:
        pool.FindFileByName(name)  # raises KeyError when reflection lacks it
    print("resolved gpuctl.v1.Agent in %s, imports %s" % (agent_file.name, ", ".join(imports)))

    def call_types(method_name):
        method = service.FindMethodByName(method_name)
        request = message_factory.GetMessageClass(method.input_type)
        response = message_factory.GetMessageClass(method.output_type)
        return "/%s/%s" % (service.full_name, method.name), request, response

    path, request, response = call_types("GetHealth")
    get_health = channel.unary_unary(
        path, request_serializer=request.SerializeToString, response_deserializer=response.FromString
    )
    snapshot = get_health(request(), timeout=10)
    expected = mem_total_bytes()
    if snapshot.host.mem_total_bytes != expected:
        fail("GetHealth host.mem_total_bytes %d, /proc/meminfo says %d" % (snapshot.host.mem_total_bytes, expected))
    if snapshot.host.cpus < 1:
        fail("GetHealth host.cpus %d" % snapshot.host.cpus)
    print("GetHealth: mem_total_bytes %d, cpus %d" % (snapshot.host.mem_total_bytes, snapshot.host.cpus))

    path, request, response = call_types("WatchHealth")
    watch = channel.unary_stream(
        path, request_serializer=request.SerializeToString, response_deserializer=response.FromString
    )
    stream = watch(request(interval_ms=200), timeout=20)
    seen = 0
    for snapshot in stream:
        if snapshot.host.mem_total_bytes != expected:
            fail("WatchHealth snapshot %d: mem_total_bytes %d" % (seen, snapshot.host.mem_total_bytes))
        seen += 1
        if seen == 3:
            stream.cancel()
            break
    if seen != 3:
        fail("WatchHealth gave %d snapshots" % seen)
    print("WatchHealth: %d snapshots" % seen)
    print("PASS")


if __name__ == "__main__":
    main()
