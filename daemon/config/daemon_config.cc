#include "daemon/config/daemon_config.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <type_traits>
#include <variant>
#include <nlohmann/json.hpp>

#include "common/units.h"

namespace gpuctl::daemon {

std::string ListenAddress::GrpcUri() const {
  if (kind == Kind::kUnix) return "unix:" + path;
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
  return host + ":" + std::to_string(port);
}

Result<ListenAddress> ParseListenAddress(const std::string& text) {
  ListenAddress addr;
  if (text.rfind("unix:", 0) == 0) {
    addr.kind = ListenAddress::Kind::kUnix;
    addr.path = text.substr(5);
    if (addr.path.empty() || addr.path.front() != '/') {
      return InvalidArgument("--listen " + text + ": a unix socket needs an absolute path, e.g. unix:/run/gpuctl/gpuctld.sock");
    }
    return addr;
  }
  addr.kind = ListenAddress::Kind::kTcp;
  std::string port_text;
  if (!text.empty() && text.front() == '[') {
    size_t close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return InvalidArgument("--listen " + text + ": expected [IPV6]:PORT, e.g. [::1]:50051");
    }
    addr.host = text.substr(1, close - 1);
    port_text = text.substr(close + 2);
  } else {
    size_t colon = text.rfind(':');
    if (colon == std::string::npos || colon == 0) {
      return InvalidArgument("--listen " + text + ": expected unix:PATH or HOST:PORT, e.g. 127.0.0.1:50051");
    }
    addr.host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
  }
  if (port_text.empty() || port_text.find_first_not_of("0123456789") != std::string::npos ||
      port_text.size() > 5 || std::stoi(port_text) > 65535) {
    return InvalidArgument("--listen " + text + ": the port must be a number from 0 to 65535");
  }
  addr.port = std::stoi(port_text);
  if (addr.host.empty()) {
    return InvalidArgument("--listen " + text + ": give the address to serve, e.g. 127.0.0.1:50051 or 0.0.0.0:50051");
  }
  return addr;
}

namespace {

// One key of the config file: its type, and where its value goes.
enum class KeyType { kString, kInteger, kBoolean, kStrings };

const char* KeyTypeName(KeyType type) {
  switch (type) {
    case KeyType::kString: return "string";
    case KeyType::kInteger: return "integer";
    case KeyType::kBoolean: return "boolean";
    case KeyType::kStrings: return "array of strings";
  }
  return "?";
}

using ConfigField = std::variant<std::string DaemonConfig::*, int DaemonConfig::*, bool DaemonConfig::*,
                                 std::vector<std::string> DaemonConfig::*>;

struct KeySpec {
  const char* name;
  ConfigField field;
};

KeyType TypeOf(const ConfigField& field) { return static_cast<KeyType>(field.index()); }

const std::vector<KeySpec>& Keys() {
  static const std::vector<KeySpec> keys = {
      {"listen", &DaemonConfig::listen},
      {"state_dir", &DaemonConfig::state_dir},
      {"log_level", &DaemonConfig::log_level},
      {"nvml_library", &DaemonConfig::nvml_library},
      {"nvidia_smi", &DaemonConfig::nvidia_smi},
      {"gpu_max_age_ms", &DaemonConfig::gpu_max_age_ms},
      {"tmux_socket", &DaemonConfig::tmux_socket},
      {"pct", &DaemonConfig::pct},
      {"lxc_rootfs", &DaemonConfig::lxc_rootfs},
      {"provision_root", &DaemonConfig::provision_root},
      {"max_log_streams", &DaemonConfig::max_log_streams},
      {"gpu_busy_below", &DaemonConfig::gpu_busy_below},
      {"kernel_log", &DaemonConfig::kernel_log},
      {"guard", &DaemonConfig::guard},
      {"guard_domain", &DaemonConfig::guard_domain},
      {"guard_reserve", &DaemonConfig::guard_reserve},
      {"guard_unmanaged", &DaemonConfig::guard_unmanaged},
      {"guard_protect", &DaemonConfig::guard_protect},
      {"cgroup_parent", &DaemonConfig::cgroup_parent},
      {"lock_memory", &DaemonConfig::lock_memory},
      {"tls_cert", &DaemonConfig::tls_cert},
      {"tls_key", &DaemonConfig::tls_key},
      {"tls_client_ca", &DaemonConfig::tls_client_ca},
      {"metrics_listen", &DaemonConfig::metrics_listen},
  };
  return keys;
}

// "a string (\"5\")", "a number (1.5)", "an array": what a value was
// instead, with a short view of it.
std::string Described(const nlohmann::json& value) {
  std::string kind = value.is_string()                ? "a string"
                     : value.is_boolean()             ? "a boolean"
                     : value.is_number_integer()      ? "an integer"
                     : value.is_number()              ? "a number"
                     : value.is_array()               ? "an array"
                     : value.is_object()              ? "an object"
                                                      : "null";
  std::string shown = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (shown.size() > 40) shown = shown.substr(0, 37) + "...";
  return kind + " (" + shown + ")";
}

// The value in its field, or why not.
Status Assign(const KeySpec& key, const nlohmann::json& value, DaemonConfig& config) {
  const KeyType type = TypeOf(key.field);
  bool fits = false;
  switch (type) {
    case KeyType::kString: fits = value.is_string(); break;
    case KeyType::kInteger:
      fits = value.is_number_unsigned() ? value.get<uint64_t>() <= INT32_MAX
                                        : value.is_number_integer() && value.get<int64_t>() >= INT32_MIN &&
                                              value.get<int64_t>() <= INT32_MAX;
      break;
    case KeyType::kBoolean: fits = value.is_boolean(); break;
    case KeyType::kStrings:
      fits = value.is_array() && std::all_of(value.begin(), value.end(), [](const nlohmann::json& v) {
               return v.is_string();
             });
      break;
  }
  if (!fits && type == KeyType::kInteger && value.is_number_integer()) {
    return InvalidArgument("key '" + std::string(key.name) + "' must be an integer from " + std::to_string(INT32_MIN) +
                           " to " + std::to_string(INT32_MAX) + ", got " + value.dump());
  }
  if (!fits) {
    const char* type_name = KeyTypeName(type);
    const bool an = type == KeyType::kInteger || type == KeyType::kStrings;
    return InvalidArgument("key '" + std::string(key.name) + "' must be " + (an ? "an " : "a ") + type_name +
                           ", got " + Described(value));
  }
  std::visit(
      [&](auto member) {
        using Value = std::remove_reference_t<decltype(config.*member)>;
        config.*member = value.get<Value>();
      },
      key.field);
  return Status::Ok();
}

}  // namespace

std::vector<ConfigFileKey> ConfigFileKeys() {
  std::vector<ConfigFileKey> out;
  for (const KeySpec& key : Keys()) out.push_back({key.name, KeyTypeName(TypeOf(key.field))});
  return out;
}

Status LoadConfigFile(const std::string& path, DaemonConfig& config) {
  std::ifstream in(path);
  if (!in) return NotFound("config file " + path + " cannot be read");
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument("config file " + path + " is not valid JSON: " + e.what());
  }
  if (!doc.is_object()) return InvalidArgument("config file " + path + " must hold a JSON object");
  for (const auto& [name, value] : doc.items()) {
    auto key = std::find_if(Keys().begin(), Keys().end(), [&](const KeySpec& k) { return name == k.name; });
    if (key == Keys().end()) {
      std::string known;
      for (const KeySpec& k : Keys()) known += (known.empty() ? "" : ", ") + std::string(k.name);
      return InvalidArgument("config file " + path + ": unknown key '" + name + "' (known: " + known + ")");
    }
    if (Status s = Assign(*key, value, config); !s.ok()) return InvalidArgument("config file " + path + ": " + s.message());
  }
  return Status::Ok();
}

bool IsLoopbackHost(const std::string& host) {
  if (host == "localhost" || host == "::1" || host == "0:0:0:0:0:0:0:1") return true;
  in_addr v4{};
  return ::inet_pton(AF_INET, host.c_str(), &v4) == 1 && (ntohl(v4.s_addr) >> 24) == 127;
}

Status Validate(const DaemonConfig& config) {
  if (config.listen.empty()) return InvalidArgument("at least one --listen address is needed");
  bool any_tcp = false;
  for (const std::string& l : config.listen) {
    Result<ListenAddress> addr = ParseListenAddress(l);
    if (!addr.ok()) return addr.status();
    if (addr->kind == ListenAddress::Kind::kTcp) {
      any_tcp = true;
      if (config.tls_cert.empty() || config.tls_key.empty() || config.tls_client_ca.empty()) {
        return InvalidArgument(
            "--listen " + l + ": TCP is served only with mutual TLS; give --tls-cert, --tls-key and "
            "--tls-client-ca. Without it any local user could reach the agent, which runs jobs as root. "
            "On this host use the unix socket; from elsewhere use gpuctl --node (SSH)");
      }
    }
  }
  for (const auto& [flag, path] : {std::pair{"--tls-cert", &config.tls_cert}, std::pair{"--tls-key", &config.tls_key},
                                   std::pair{"--tls-client-ca", &config.tls_client_ca}}) {
    if (!path->empty() && path->front() != '/') {
      return InvalidArgument(std::string(flag) + " must be an absolute path, got '" + *path + "'");
    }
  }
  bool metrics_tls = false;
  if (!config.metrics_listen.empty()) {
    Result<ListenAddress> metrics = ParseListenAddress(config.metrics_listen);
    if (!metrics.ok() || metrics->kind != ListenAddress::Kind::kTcp) {
      return InvalidArgument("--metrics-listen " + config.metrics_listen + ": give HOST:PORT, e.g. 127.0.0.1:9400");
    }
    if (!IsLoopbackHost(metrics->host)) {
      metrics_tls = true;
      if (config.tls_cert.empty() || config.tls_key.empty() || config.tls_client_ca.empty()) {
        return InvalidArgument("--metrics-listen " + config.metrics_listen +
                               ": an address other hosts can reach is served only with mutual TLS; give --tls-cert, "
                               "--tls-key and --tls-client-ca (Prometheus scrapes with a client certificate), or "
                               "listen on 127.0.0.1");
      }
    }
  }
  if (config.tls() && !any_tcp && !metrics_tls) {
    return InvalidArgument("--tls-cert, --tls-key and --tls-client-ca secure TCP listen addresses, and none is given; "
                           "add --listen HOST:PORT");
  }
  if (config.state_dir.empty() || config.state_dir.front() != '/') {
    return InvalidArgument("--state-dir must be an absolute path, got '" + config.state_dir + "'");
  }
  static const char* kLevels[] = {"trace", "debug", "info", "warn", "error"};
  bool level_ok = false;
  for (const char* l : kLevels) level_ok = level_ok || config.log_level == l;
  if (!level_ok) return InvalidArgument("--log-level must be one of trace, debug, info, warn, error");
  if (config.gpu_max_age_ms < 0) return InvalidArgument("gpu_max_age_ms must be >= 0");
  if (config.max_log_streams < 1 || config.max_log_streams > 1'000'000) {
    return InvalidArgument("--max-log-streams must be between 1 and 1000000, got " +
                           std::to_string(config.max_log_streams));
  }
  if (Result<uint64_t> busy = ParseByteSize(config.gpu_busy_below); !busy.ok()) {
    return InvalidArgument("--gpu-busy-below must be a size such as 1G, got '" + config.gpu_busy_below + "'");
  }
  if (config.tmux_socket.empty() ||
      config.tmux_socket.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") !=
          std::string::npos) {
    return InvalidArgument("--tmux-socket must be a plain name from [A-Za-z0-9._-], got '" + config.tmux_socket + "'");
  }
  if (!config.cgroup_parent.empty() && config.cgroup_parent.front() != '/') {
    return InvalidArgument("--cgroup-parent must start with '/', e.g. /gpuctl");
  }
  if (config.provision_root.empty() || config.provision_root.front() != '/') {
    return InvalidArgument("--provision-root must be an absolute path (default /)");
  }
  if (config.lxc_rootfs.empty() || config.lxc_rootfs.front() != '/') {
    return InvalidArgument("--lxc-rootfs must be an absolute path template, e.g. /var/lib/lxc/{vmid}/rootfs");
  }
  return Status::Ok();
}

}  // namespace gpuctl::daemon
