#include "agents/provision/passthrough.h"

#include <algorithm>
#include <set>
#include <sstream>

namespace gpuctl::provision {
namespace {

std::string CollapseSpaces(std::string_view s) {
  std::istringstream words{std::string(s)};
  std::string word, out;
  while (words >> word) out += (out.empty() ? "" : " ") + word;
  return out;
}

struct ConfigLines {
  std::set<std::string> cgroup_allows;  // "c 195:* rwm"
  std::set<std::string> mount_sources;  // "/dev/nvidia0"
  std::set<std::string> dev_entries;    // "/dev/nvidia0" from devN:
};

ConfigLines ReadConfig(std::string_view text) {
  ConfigLines lines;
  std::istringstream in{std::string(text)};
  std::string line;
  while (std::getline(in, line)) {
    // Proxmox writes "key: value"; raw LXC configs use "key = value". A
    // [snapshot] section holds old copies, not the running config.
    if (!line.empty() && line[0] == '[') break;
    size_t sep = line.find_first_of(":=");
    if (sep == std::string::npos || line[0] == '#') continue;
    std::string key = CollapseSpaces(line.substr(0, sep));
    std::string value = CollapseSpaces(line.substr(sep + 1));
    if (key == "lxc.cgroup2.devices.allow" || key == "lxc.cgroup.devices.allow") {
      lines.cgroup_allows.insert(value);
    } else if (key == "lxc.mount.entry") {
      lines.mount_sources.insert(value.substr(0, value.find(' ')));
    } else if (key.size() > 3 && key.rfind("dev", 0) == 0 && key.find_first_not_of("0123456789", 3) == std::string::npos) {
      lines.dev_entries.insert(value.substr(0, value.find(',')));
    }
  }
  return lines;
}

bool Allows(const ConfigLines& config, int major) {
  if (config.cgroup_allows.contains("a")) return true;
  std::string prefix = "c " + std::to_string(major) + ":* ";
  for (const std::string& allow : config.cgroup_allows) {
    if (allow.rfind(prefix, 0) == 0) {
      std::string access = allow.substr(prefix.size());
      if (access.find('r') != std::string::npos && access.find('w') != std::string::npos) return true;
    }
  }
  return false;
}

// Which major a node belongs to, by its name.
std::string MajorNameOf(const std::string& node) {
  if (node.rfind("nvidia-uvm", 0) == 0) return "nvidia-uvm";
  if (node.rfind("nvidia-cap", 0) == 0) return "nvidia-caps";
  return "nvidia";
}

}  // namespace

std::map<std::string, int> ParseCharDeviceMajors(std::string_view proc_devices) {
  std::map<std::string, int> majors;
  std::istringstream in{std::string(proc_devices)};
  std::string line;
  bool character = false;
  while (std::getline(in, line)) {
    if (line.rfind("Character devices:", 0) == 0) {
      character = true;
      continue;
    }
    if (line.rfind("Block devices:", 0) == 0) character = false;
    if (!character) continue;
    std::istringstream words(line);
    int major = 0;
    std::string name;
    if (words >> major >> name) {
      majors[name] = major;
      if (name == "nvidia-frontend") majors["nvidia"] = major;
    }
  }
  return majors;
}

std::vector<std::string> MissingPassthroughLines(const PassthroughInput& input) {
  ConfigLines config = ReadConfig(input.container_config);
  std::map<std::string, int> majors = ParseCharDeviceMajors(input.proc_devices);
  if (!majors.contains("nvidia")) majors["nvidia"] = 195;  // fixed by the driver

  // Majors whose nodes are not all passed as devN entries need a cgroup allow.
  std::vector<std::string> allow_order = {"nvidia", "nvidia-uvm", "nvidia-caps"};
  // CUDA needs /dev/nvidia-uvm, which exists only once nvidia_uvm is loaded
  // on the host: its lines are wanted even when the node is not there yet.
  std::vector<std::string> nodes = input.dev_nodes;
  if (std::find(nodes.begin(), nodes.end(), "nvidia-uvm") == nodes.end()) nodes.emplace_back("nvidia-uvm");
  std::set<std::string> need_allow;
  for (const std::string& node : nodes) {
    if (!config.dev_entries.contains("/dev/" + node)) need_allow.insert(MajorNameOf(node));
  }
  if (input.dev_nodes.empty()) need_allow.insert("nvidia");
  std::vector<std::string> missing;
  for (const std::string& name : allow_order) {
    auto major = majors.find(name);
    if (!need_allow.contains(name) || major == majors.end() || Allows(config, major->second)) continue;
    missing.push_back("lxc.cgroup2.devices.allow: c " + std::to_string(major->second) + ":* rwm");
  }
  for (const std::string& node : nodes) {
    std::string path = "/dev/" + node;
    if (config.mount_sources.contains(path) || config.dev_entries.contains(path)) continue;
    // /dev/nvidia-caps is a directory (nvidia-cap1, nvidia-cap2 inside).
    std::string create = node == "nvidia-caps" ? "dir" : "file";
    missing.push_back("lxc.mount.entry: " + path + " dev/" + node + " none bind,optional,create=" + create);
  }
  return missing;
}

bool UvmNotLoaded(const PassthroughInput& input) {
  return !ParseCharDeviceMajors(input.proc_devices).contains("nvidia-uvm");
}

}  // namespace gpuctl::provision
