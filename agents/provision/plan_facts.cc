#include "agents/provision/plan_facts.h"

#include <sstream>

#include "agents/sys/files.h"

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

bool LooksLikeDriverVersion(std::string_view word) {
  // 590.44.01, 580.159.04, 535.54: digits and dots, at least one dot.
  if (word.empty() || word.find('.') == std::string_view::npos) return false;
  for (char c : word) {
    if (!((c >= '0' && c <= '9') || c == '.')) return false;
  }
  return word.front() != '.';
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

std::optional<NvidiaModule> ParseNvidiaModuleVersion(std::string_view text) {
  std::string_view first = text.substr(0, text.find('\n'));
  if (first.find("NVRM version:") == std::string_view::npos) return std::nullopt;
  std::istringstream words{std::string(first)};
  std::string word;
  while (words >> word) {
    if (LooksLikeDriverVersion(word)) {
      return NvidiaModule{word, first.find("Open Kernel Module") != std::string_view::npos};
    }
  }
  return std::nullopt;
}

PlanFacts ReadPlanFacts(const sys::HostFs& host, sys::CommandRunner& runner) {
  PlanFacts facts;
#if defined(__aarch64__)
  facts.machine = "aarch64";
#endif
  auto os_text = host.ReadFile("etc/os-release");
  if (!os_text.ok()) os_text = host.ReadFile("usr/lib/os-release");
  if (os_text.ok()) {
    OsRelease os = ParseOsRelease(*os_text);
    facts.os_id = os.id;
    facts.os_version_id = os.version_id;
  }
  facts.lxc_guest = host.DetectContainer() == sys::ContainerKind::kLxc;
  // pmxcfs mounts /etc/pve on every Proxmox VE node.
  facts.proxmox_host = sys::PathExists(host.Path("etc/pve/.version")) || sys::PathExists(host.Path("usr/bin/pveversion"));
  if (auto version = host.ReadFile("proc/driver/nvidia/version"); version.ok()) {
    if (auto module = ParseNvidiaModuleVersion(*version)) {
      facts.kernel_module_version = module->version;
      facts.kernel_module_open = module->open;
    }
  }
  if (auto meminfo = host.ReadMeminfo(); meminfo.ok()) facts.mem_available_bytes = meminfo->mem_available_bytes();
  facts.cpus = host.ReadCpuCount();

  sys::RunOptions quick;
  quick.timeout = std::chrono::seconds(10);
  auto gpus = runner.Run({"nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"}, quick);
  if (gpus.ok() && gpus->exit_code == 0) {
    std::istringstream lines(gpus->stdout_text);
    std::string line;
    while (std::getline(lines, line)) {
      std::string cap = Trim(line);
      if (!cap.empty()) facts.compute_capabilities.push_back(cap);
    }
  }
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
