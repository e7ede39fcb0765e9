#include "agents/sys/host_fs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

namespace gpuctl::sys {
namespace {

// A read that keeps errno: callers must tell EOPNOTSUPP (PSI disabled) from
// ENOENT and real I/O errors, which a Status code alone does not carry.
struct RawRead {
  std::string text;
  int err = 0;
};

RawRead ReadPath(const std::string& path) {
  RawRead out;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    out.err = errno;
    return out;
  }
  // Kernel files report size 0, so read until EOF instead of trusting stat.
  char buf[4096];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      out.err = errno;
      break;
    }
    out.text.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

bool StatSucceeds(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

bool IsDir(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string Trimmed(std::string_view s) {
  constexpr std::string_view kSpaces = " \t\r\n";
  size_t begin = s.find_first_not_of(kSpaces);
  if (begin == std::string_view::npos) return "";
  return std::string(s.substr(begin, s.find_last_not_of(kSpaces) - begin + 1));
}

}  // namespace

const char* CgroupVersionName(CgroupVersion v) {
  switch (v) {
    case CgroupVersion::kV1: return "1";
    case CgroupVersion::kV2: return "2";
    case CgroupVersion::kHybrid: return "hybrid";
    case CgroupVersion::kUnknown: return "unknown";
  }
  return "unknown";
}

HostFs::HostFs(std::string root) : root_(std::move(root)) {}

std::string HostFs::Path(std::string_view relative) const {
  while (!relative.empty() && relative.front() == '/') relative.remove_prefix(1);
  std::string path = root_;
  if (path.empty() || path.back() != '/') path += '/';
  path += relative;
  return path;
}

Result<std::string> HostFs::ReadFile(std::string_view relative) const {
  std::string path = Path(relative);
  RawRead read = ReadPath(path);
  if (read.err != 0) return ErrnoError("cannot read " + path, read.err);
  return std::move(read.text);
}

bool HostFs::Exists(std::string_view relative) const { return StatSucceeds(Path(relative)); }

Result<Meminfo> HostFs::ReadMeminfo() const {
  Result<std::string> text = ReadFile("proc/meminfo");
  if (!text.ok()) return text.status();
  Result<Meminfo> info = ParseMeminfo(*text);
  if (!info.ok()) return info.status().Wrap(Path("proc/meminfo"));
  return info;
}

std::optional<Pressure> HostFs::ReadMemoryPressure() const {
  // Absent (no CONFIG_PSI) and EOPNOTSUPP (psi=0) both mean "no PSI here";
  // the declared contract has no error channel, so other failures do too.
  RawRead read = ReadPath(Path("proc/pressure/memory"));
  if (read.err != 0) return std::nullopt;
  Result<Pressure> pressure = ParsePressure(read.text);
  if (!pressure.ok()) return std::nullopt;
  return *pressure;
}

Result<LoadAverage> HostFs::ReadLoadavg() const {
  Result<std::string> text = ReadFile("proc/loadavg");
  if (!text.ok()) return text.status();
  Result<LoadAverage> load = ParseLoadavg(*text);
  if (!load.ok()) return load.status().Wrap(Path("proc/loadavg"));
  return load;
}

Result<double> HostFs::ReadUptime() const {
  Result<std::string> text = ReadFile("proc/uptime");
  if (!text.ok()) return text.status();
  Result<double> uptime = ParseUptime(*text);
  if (!uptime.ok()) return uptime.status().Wrap(Path("proc/uptime"));
  return uptime;
}

std::string HostFs::ReadHostname() const {
  return Trimmed(ReadFile("proc/sys/kernel/hostname").value_or(""));
}

std::string HostFs::ReadKernelRelease() const {
  return Trimmed(ReadFile("proc/sys/kernel/osrelease").value_or(""));
}

std::string HostFs::ReadOsPrettyName() const {
  // The os-release spec: read /etc/os-release, and only if it is missing
  // /usr/lib/os-release. NAME stands in for a missing PRETTY_NAME.
  Result<std::string> text = ReadFile("etc/os-release");
  if (!text.ok()) text = ReadFile("usr/lib/os-release");
  if (!text.ok()) return "";
  std::map<std::string, std::string> fields = ParseOsRelease(*text);
  if (auto it = fields.find("PRETTY_NAME"); it != fields.end()) return it->second;
  if (auto it = fields.find("NAME"); it != fields.end()) return it->second;
  return "";
}

uint32_t HostFs::ReadCpuCount() const {
  // Affinity (what a cpuset or taskset leaves us) first, then the online CPUs.
  Result<std::string> status = ReadFile("proc/self/status");
  if (status.ok()) {
    if (auto list = FindStatusField(*status, "Cpus_allowed_list")) {
      Result<uint32_t> n = CountCpuList(*list);
      if (n.ok() && *n > 0) return *n;
    }
  }
  Result<std::string> online = ReadFile("sys/devices/system/cpu/online");
  if (!online.ok()) return 0;
  return CountCpuList(*online).value_or(0);
}

Result<std::vector<CgroupEntry>> HostFs::ReadSelfCgroup() const {
  Result<std::string> text = ReadFile("proc/self/cgroup");
  if (!text.ok()) return text.status();
  Result<std::vector<CgroupEntry>> entries = ParseProcCgroup(*text);
  if (!entries.ok()) return entries.status().Wrap(Path("proc/self/cgroup"));
  return entries;
}

CgroupVersion HostFs::DetectCgroupVersion() const {
  if (Exists("sys/fs/cgroup/cgroup.controllers")) return CgroupVersion::kV2;
  static constexpr std::string_view kV1Controllers[] = {
      "memory", "cpu", "cpuacct", "cpuset", "blkio", "pids", "devices", "freezer"};
  bool has_v1 = false;
  for (std::string_view controller : kV1Controllers) {
    has_v1 = has_v1 || IsDir(Path("sys/fs/cgroup/" + std::string(controller)));
  }
  if (!has_v1) return CgroupVersion::kUnknown;
  return IsDir(Path("sys/fs/cgroup/unified")) ? CgroupVersion::kHybrid : CgroupVersion::kV1;
}

}  // namespace gpuctl::sys
