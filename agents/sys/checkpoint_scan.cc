#include "agents/sys/checkpoint_scan.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <system_error>
#include <utility>

#include "agents/sys/files.h"

namespace gpuctl::sys {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kHfState = "trainer_state.json";
constexpr std::string_view kDcpMetadata = ".metadata";
constexpr std::string_view kDeepSpeedLatest = "latest";

struct TreeWalk {
  uint64_t bytes = 0;
  uint64_t entries = 0;
  int64_t newest_mtime_ns = 0;
  bool truncated = false;  // the budget ran out before the whole tree was seen
};

// Walks `root` and everything under it without following symlinks (no loops),
// spending one of `budget` per entry. Iterative, so a deep tree holds neither
// stack frames nor open directories.
void Walk(const std::string& root, size_t& budget, TreeWalk& walk) {
  std::vector<std::string> pending{root};
  while (!pending.empty()) {
    if (budget == 0) {
      walk.truncated = true;
      return;
    }
    --budget;
    const std::string path = std::move(pending.back());
    pending.pop_back();
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) continue;  // removed while we scan
    ++walk.entries;
    if (S_ISREG(st.st_mode)) walk.bytes += static_cast<uint64_t>(st.st_size);
    const int64_t mtime_ns = int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec;
    walk.newest_mtime_ns = std::max(walk.newest_mtime_ns, mtime_ns);
    if (!S_ISDIR(st.st_mode)) continue;
    std::error_code ec;
    for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
      if (pending.size() >= budget) {  // more than could ever be visited
        walk.truncated = true;
        break;
      }
      pending.push_back(it->path().string());
    }
  }
}

// What a directory's own entries say about its format.
struct DirFacts {
  bool has_hf_state = false;
  bool has_latest = false;
  bool has_metadata = false;
  bool has_distcp = false;
  bool has_marker = false;
};

DirFacts ReadDirFacts(const std::string& dir, const std::string& marker, size_t limit) {
  DirFacts facts;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end && limit > 0; it.increment(ec), --limit) {
    std::error_code type_ec;
    if (it->symlink_status(type_ec).type() != fs::file_type::regular) continue;
    const std::string name = it->path().filename().string();
    facts.has_hf_state |= name == kHfState;
    facts.has_latest |= name == kDeepSpeedLatest;
    facts.has_metadata |= name == kDcpMetadata;
    facts.has_distcp |= name.ends_with(".distcp");
    facts.has_marker |= !marker.empty() && name == marker;
  }
  return facts;
}

// The Trainer writes trainer_state.json with one truncate-and-write, as
// json.dump does: a kill in between leaves it empty or cut short (at a page,
// a write() the signal ended early), and a run resumed from it fails on its
// first line. A cut JSON object never closes its first '{' (brackets within
// strings do not count); a whole one closes it with only blanks after. Not
// a JSON parser's accept(): Python writes a NaN or infinite loss or
// grad_norm as NaN and Infinity, which strict JSON refuses, and such a save
// is whole.
bool IsWholeJsonObject(std::string_view text) {
  constexpr std::string_view kBlanks = " \t\r\n";
  size_t i = text.find_first_not_of(kBlanks);
  if (i == std::string_view::npos || text[i] != '{') return false;
  int depth = 0;
  bool in_string = false;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character, '"' or '\\' included
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if ((c == '}' || c == ']') && --depth == 0) {
      return text.find_first_not_of(kBlanks, i + 1) == std::string_view::npos;
    }
  }
  return false;
}

// Why the HF state file at `path` does not show a finished save; "" when it
// does. Read whole up to 1 MiB (the Trainer logs every 500 steps by default: a long run's state is tens of KiB);
// past it only its last bytes are looked at, which must close the object.
std::string HfStateProblem(const std::string& path) {
  constexpr uint64_t kWholeReadBytes = 1 << 20;
  constexpr uint64_t kTailBytes = 4096;
  const std::string cut = "trainer_state.json is empty or cut short (the trainer was stopped while writing it)";
  Result<uint64_t> size = RegularFileSize(path);
  if (!size.ok()) return "trainer_state.json cannot be read: " + size.status().message();
  if (*size <= kWholeReadBytes) {
    Result<std::string> text = ReadRegularFile(path, kWholeReadBytes);
    if (!text.ok()) return "trainer_state.json cannot be read: " + text.status().message();
    return IsWholeJsonObject(*text) ? "" : cut;
  }
  Result<std::string> tail = ReadRegularFileRange(path, *size - kTailBytes, kTailBytes);
  if (!tail.ok()) return "trainer_state.json cannot be read: " + tail.status().message();
  const size_t last = tail->find_last_not_of(" \t\r\n");
  return last != std::string::npos && (*tail)[last] == '}' ? "" : cut;
}

bool IsTemporaryName(std::string_view name) {
  return name.starts_with('.') || name.starts_with("tmp") || name.ends_with(".tmp") ||
         name.ends_with(".partial") || name.ends_with(".incomplete");
}

bool IsHfName(std::string_view name) {
  constexpr std::string_view kPrefix = "checkpoint-";
  if (!name.starts_with(kPrefix) || name.size() == kPrefix.size()) return false;
  name.remove_prefix(kPrefix.size());
  return std::all_of(name.begin(), name.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

// Whether `path` or anything beneath it is in `open` (a sorted set, so the
// paths beneath it are one contiguous range starting at path + "/").
bool HasOpenForWrite(const std::set<std::string>& open, const std::string& path) {
  if (open.contains(path)) return true;
  const std::string prefix = path + '/';
  auto it = open.lower_bound(prefix);
  return it != open.end() && it->starts_with(prefix);
}

std::string Seconds(int64_t ms) { return std::to_string(std::max<int64_t>(ms, 0) / 1000) + "s"; }

class CheckpointScan {
 public:
  explicit CheckpointScan(const CheckpointScanOptions& opts) : opts_(opts), budget_(opts.max_entries) {}

  std::vector<CheckpointCandidate> Run() {
    if (opts_.dir.empty()) return {};
    // Canonical, as the fd targets in open_for_write are.
    std::error_code ec;
    const fs::path absolute = fs::absolute(opts_.dir, ec);
    if (ec) return {};
    const fs::path root = fs::weakly_canonical(absolute, ec);
    if (ec || !sys::IsDirectory(root.string())) return {};
    if (ReadDirFacts(root.string(), "", budget_).has_latest) {
      AddDeepSpeedTree(root.string());
    } else {
      for (const auto& [name, is_dir] : Children(root.string())) AddChild(root / name, name, is_dir);
    }
    std::sort(out_.begin(), out_.end(),
              [](const auto& a, const auto& b) { return a.checkpoint.path < b.checkpoint.path; });
    return std::move(out_);
  }

 private:
  // Names and whether each is a real directory (symlinks left out), highest
  // step first, then by name: a scan stopped by max_entries has seen the
  // newest, and what it reaches does not depend on readdir's order.
  std::vector<std::pair<std::string, bool>> Children(const std::string& dir) const {
    std::vector<std::pair<std::string, bool>> children;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end && children.size() < opts_.max_entries;
         it.increment(ec)) {
      std::error_code type_ec;
      const fs::file_type type = it->symlink_status(type_ec).type();
      if (type_ec || type == fs::file_type::symlink) continue;
      children.emplace_back(it->path().filename().string(), type == fs::file_type::directory);
    }
    std::sort(children.begin(), children.end(), [](const auto& a, const auto& b) {
      const std::optional<uint64_t> step_a = StepFromName(a.first), step_b = StepFromName(b.first);
      if (step_a != step_b) return step_a > step_b;  // nullopt sorts last
      return a.first < b.first;
    });
    return children;
  }

  void AddChild(const fs::path& path, const std::string& name, bool is_dir) {
    if (budget_ == 0) {
      Add(path, name, kFormatPlain, "not examined: the scan stopped at max_entries (" +
                                        std::to_string(opts_.max_entries) + ")");
      return;
    }
    const DirFacts facts = is_dir ? ReadDirFacts(path.string(), opts_.complete_marker, budget_) : DirFacts{};
    if (is_dir && IsHfName(name)) {
      const std::string state = (path / kHfState).string();
      Add(path, name, kFormatHf,
          !facts.has_hf_state ? "no trainer_state.json yet (the Trainer writes it last)"
          : opts_.open_for_write.contains(state) ? "trainer_state.json is open for writing"
                                                 : HfStateProblem(state));
    } else if (facts.has_latest) {
      AddDeepSpeedTree(path.string());
    } else if (facts.has_metadata || facts.has_distcp) {
      const std::string metadata = (path / kDcpMetadata).string();
      Add(path, name, kFormatDcp,
          !facts.has_metadata ? "no .metadata yet (torch.distributed.checkpoint writes it last)"
          : opts_.open_for_write.contains(metadata) ? ".metadata is open for writing"
                                                    : "");
    } else if (facts.has_marker) {
      Add(path, name, kFormatMarker, "");
    } else if (is_dir && !opts_.complete_marker.empty()) {
      Add(path, name, kFormatPlain, "no " + opts_.complete_marker + " in it yet");
    } else {
      AddPlain(path, name);
    }
  }

  void AddPlain(const fs::path& path, const std::string& name) {
    CheckpointCandidate& c = Add(path, name, kFormatPlain, "");
    if (!c.complete) return;
    const int64_t age_ms = opts_.now_unix_ms - c.checkpoint.mtime_unix_ms;
    if (HasOpenForWrite(opts_.open_for_write, c.checkpoint.path)) {
      Incomplete(c, "a file in it is open for writing");
    } else if (walk_truncated_) {
      Incomplete(c, "too large to check it is quiet: the scan stopped at max_entries (" +
                        std::to_string(opts_.max_entries) + ")");
    } else if (age_ms < opts_.quiet_ms) {
      Incomplete(c, "changed " + Seconds(age_ms) + " ago; a plain checkpoint must be unchanged for " +
                        Seconds(opts_.quiet_ms));
    }
  }

  // DeepSpeed writes `latest` after the step directory it names is saved, so
  // that one is complete and no other step directory of the tree is chosen:
  // a newer one beside it is still being written, or was left by a crash.
  void AddDeepSpeedTree(const std::string& tree) {
    const std::string latest_path = (fs::path(tree) / kDeepSpeedLatest).string();
    Result<std::string> text = sys::ReadRegularFile(latest_path, 4096);
    std::string named = text.ok() ? *text : "";
    named.erase(0, named.find_first_not_of(" \t\r\n"));
    named.erase(named.find_last_not_of(" \t\r\n") + 1);
    const bool latest_open = opts_.open_for_write.contains(latest_path);
    bool found = false;
    for (const auto& [name, is_dir] : Children(tree)) {
      if (!is_dir) continue;
      const bool is_named = name == named;
      found |= is_named;
      Add(fs::path(tree) / name, name, kFormatDeepSpeed,
          !is_named     ? "not what DeepSpeed's latest names ('" + named + "')"
          : latest_open ? "latest is open for writing"
                        : "");
    }
    if (!found) {
      Add(tree, fs::path(tree).filename().string(), kFormatDeepSpeed,
          "DeepSpeed's latest names '" + named + "', which is not a directory beside it");
    }
  }

  // Walks the candidate and records it; complete unless `why_not` says
  // otherwise or its name is a temporary one.
  CheckpointCandidate& Add(const fs::path& path, const std::string& name, std::string_view format,
                           std::string why_not) {
    TreeWalk walk;
    Walk(path.string(), budget_, walk);
    walk_truncated_ = walk.truncated;
    if (why_not.empty() && IsTemporaryName(name)) why_not = "a temporary name";
    CheckpointCandidate c{
        .checkpoint = {.path = path.string(),
                       .format = std::string(format),
                       .step = StepFromName(name),
                       .mtime_unix_ms = walk.newest_mtime_ns / 1'000'000,
                       .bytes = walk.bytes},
        .complete = why_not.empty(),
        .why_not = std::move(why_not)};
    out_.push_back(std::move(c));
    return out_.back();
  }

  static void Incomplete(CheckpointCandidate& c, std::string why_not) {
    c.complete = false;
    c.why_not = std::move(why_not);
  }

  const CheckpointScanOptions& opts_;
  size_t budget_;
  bool walk_truncated_ = false;  // of the candidate Add walked last
  std::vector<CheckpointCandidate> out_;
};

std::optional<uint64_t> TrailingNumber(std::string_view s) {
  size_t start = s.size();
  while (start > 0 && std::isdigit(static_cast<unsigned char>(s[start - 1]))) --start;
  if (start == s.size()) return std::nullopt;
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(s.data() + start, s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return value;
}

}  // namespace

std::vector<CheckpointCandidate> ScanCheckpoints(const CheckpointScanOptions& opts) {
  return CheckpointScan(opts).Run();
}

std::optional<Checkpoint> FindLatestCompleteCheckpoint(const CheckpointScanOptions& opts) {
  std::optional<Checkpoint> newest;
  for (CheckpointCandidate& c : ScanCheckpoints(opts)) {
    if (c.complete && (!newest || IsNewerCheckpoint(c.checkpoint, *newest))) newest = std::move(c.checkpoint);
  }
  return newest;
}

bool IsNewerCheckpoint(const Checkpoint& a, const Checkpoint& b) {
  if (a.step && b.step && *a.step != *b.step) return *a.step > *b.step;
  if (a.mtime_unix_ms != b.mtime_unix_ms) return a.mtime_unix_ms > b.mtime_unix_ms;
  return a.path > b.path;
}

std::optional<uint64_t> StepFromName(std::string_view name) {
  if (std::optional<uint64_t> step = TrailingNumber(name)) return step;
  const size_t dot = name.rfind('.');
  if (dot == std::string_view::npos || dot == 0) return std::nullopt;
  return TrailingNumber(name.substr(0, dot));
}

std::optional<unsigned> ParseFdinfoFlags(std::string_view fdinfo) {
  constexpr std::string_view kField = "flags:";
  size_t at = fdinfo.starts_with(kField) ? 0 : fdinfo.find("\nflags:");
  if (at == std::string_view::npos) return std::nullopt;
  at += at == 0 ? kField.size() : kField.size() + 1;
  while (at < fdinfo.size() && (fdinfo[at] == ' ' || fdinfo[at] == '\t')) ++at;
  unsigned flags = 0;
  auto [end, ec] = std::from_chars(fdinfo.data() + at, fdinfo.data() + fdinfo.size(), flags, 8);
  if (ec != std::errc() || end == fdinfo.data() + at) return std::nullopt;
  return flags;
}

std::set<std::string> OpenForWrite(int64_t pid, const sys::HostFs& host) {
  std::set<std::string> paths;
  if (pid <= 0) return paths;
  const std::string proc = "proc/" + std::to_string(pid);
  std::error_code ec;
  for (fs::directory_iterator it(host.Path(proc + "/fd"), ec), end; !ec && it != end; it.increment(ec)) {
    Result<std::string> info = host.ReadFile(proc + "/fdinfo/" + it->path().filename().string());
    if (!info.ok()) continue;  // closed since listed
    std::optional<unsigned> flags = ParseFdinfoFlags(*info);
    if (!flags || (*flags & O_ACCMODE) == O_RDONLY) continue;
    std::error_code link_ec;
    const fs::path target = fs::read_symlink(it->path(), link_ec);
    // pipe:[N], socket:[N] and anon_inode:... are not files in a checkpoint.
    if (link_ec || !target.is_absolute()) continue;
    paths.insert(target.string());
  }
  return paths;
}

TreeSignature SignatureOf(const std::string& dir, size_t max_entries) {
  TreeWalk walk;
  Walk(dir, max_entries, walk);
  return {.bytes = walk.bytes, .entries = walk.entries, .newest_mtime_ns = walk.newest_mtime_ns};
}

}  // namespace gpuctl::sys
