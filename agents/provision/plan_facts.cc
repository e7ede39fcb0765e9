#include "agents/provision/plan_facts.h"

#include <sstream>

namespace gpuctl::provision {
namespace {

std::string Unquote(std::string value) {
  if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') && value.back() == value.front()) {
    return value.substr(1, value.size() - 2);
  }
  return value;
}

std::string Trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

}  // namespace

OsRelease ParseOsRelease(std::string_view text) {
  OsRelease os;
  std::istringstream in{std::string(text)};
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("ID=", 0) == 0) os.id = Unquote(Trim(line.substr(3)));
    if (line.rfind("VERSION_ID=", 0) == 0) os.version_id = Unquote(Trim(line.substr(11)));
  }
  return os;
}

PlanFacts FactsFromProbe(const HostProbe& probe) {
  PlanFacts facts;
#if defined(__aarch64__)
  facts.machine = "aarch64";
#endif
  facts.os_id = probe.os_id;
  facts.os_version_id = probe.os_version_id;
  facts.lxc_guest = probe.lxc_guest;
  facts.proxmox_host = probe.proxmox_host;
  if (probe.driver_module) {
    facts.kernel_module_version = probe.driver_module->version;
    facts.kernel_module_open = probe.driver_module->open;
  }
  for (const ProbedGpu& gpu : probe.gpus) {
    if (!gpu.compute_capability.empty()) facts.compute_capabilities.push_back(gpu.compute_capability);
  }
  facts.mem_available_bytes = probe.mem_available_bytes;
  facts.cpus = probe.cpus;
  return facts;
}

PlanFacts ContainerFacts(const PlanFacts& host, const sys::HostFs& container_root) {
  PlanFacts facts = host;
  facts.lxc_guest = true;
  facts.proxmox_host = false;
  auto os_text = container_root.ReadFile("etc/os-release");
  if (!os_text.ok()) os_text = container_root.ReadFile("usr/lib/os-release");
  OsRelease os = os_text.ok() ? ParseOsRelease(*os_text) : OsRelease{};
  facts.os_id = os.id;
  facts.os_version_id = os.version_id;
  return facts;
}

}  // namespace gpuctl::provision
