#include "agents/events/event_journal.h"

#include <algorithm>
#include <deque>

#include <spdlog/spdlog.h>

#include "agents/sys/append_file.h"
#include "agents/sys/disk_space.h"
#include "agents/sys/files.h"
#include "common/json_integer.h"
#include "common/json_text.h"

namespace gpuctl::events {
namespace {

constexpr size_t kMaxJournalRead = 64 << 20;

Result<sys::AppendTarget> OpenForAppend(const std::string& path) {
  Result<sys::AppendTarget> file = sys::OpenForAppend(path, 0600);
  if (!file.ok()) return file.status().Wrap("opening the event journal");
  return file;
}

}  // namespace

EventJournal::EventJournal(std::string dir, uint64_t max_bytes, sys::UniqueFd fd, uint64_t size)
    : dir_(std::move(dir)), max_bytes_(max_bytes), fd_(std::move(fd)), size_(size), allocated_(size) {}

Result<std::unique_ptr<EventJournal>> EventJournal::Open(const std::string& dir, uint64_t max_bytes) {
  if (Status s = sys::EnsureDir(dir, 0700); !s.ok()) return s.Wrap("preparing the event journal");
  std::string path = dir + "/events.jsonl";
  Result<sys::AppendTarget> file = OpenForAppend(path);
  if (!file.ok()) return file.status();
  auto journal = std::unique_ptr<EventJournal>(
      new EventJournal(dir, std::max<uint64_t>(max_bytes, 4096), std::move(file->fd), file->size));
  journal->KeepReserve();
  return journal;
}

std::string EventJournal::ToLine(const AgentEvent& e) {
  return DumpJson({{"seq", e.seq}, {"time_unix_ms", e.time_unix_ms}, {"kind", e.kind}, {"job", e.job},
                   {"message", e.message}, {"fields", e.fields}});
}

Result<AgentEvent> EventJournal::FromLine(std::string_view line) {
  nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return InvalidArgument("not a journal line");
  try {
    AgentEvent e;
    e.seq = JsonInteger<uint64_t>(j.at("seq"));
    e.time_unix_ms = JsonInteger<int64_t>(j.at("time_unix_ms"));
    e.kind = j.at("kind").get<std::string>();
    e.job = j.value("job", "");
    e.message = j.value("message", "");
    e.fields = j.value("fields", nlohmann::json::object());
    if (e.seq == 0 || e.kind.empty()) return InvalidArgument("a journal line without seq or kind");
    return e;
  } catch (const nlohmann::json::exception& error) {
    return InvalidArgument(std::string("malformed journal line: ") + error.what());
  }
}

std::vector<AgentEvent> EventJournal::LoadRecent(size_t max) const {
  return LoadRecent(max, [](const AgentEvent&) { return false; }, 0).recent;
}

EventJournal::Loaded EventJournal::LoadRecent(size_t max, const std::function<bool(const AgentEvent&)>& also,
                                              size_t also_max) const {
  std::deque<AgentEvent> recent, older;
  for (const std::string& path : {Previous(), Current()}) {
    Result<std::string> text = sys::ReadRegularFile(path, kMaxJournalRead);
    if (!text.ok()) continue;
    size_t at = 0;
    while (at < text->size()) {
      size_t end = text->find('\n', at);
      if (end == std::string::npos) end = text->size();
      Result<AgentEvent> e = FromLine(std::string_view(*text).substr(at, end - at));
      at = end + 1;
      if (!e.ok()) continue;
      // Seqs only rise; anything else is a leftover, not the journal's order.
      if (!recent.empty() && e->seq <= recent.back().seq) continue;
      recent.push_back(std::move(*e));
      if (recent.size() <= max) continue;
      // Falls out of the newest: kept apart when `also` wants it.
      if (also_max > 0 && also(recent.front())) {
        older.push_back(std::move(recent.front()));
        if (older.size() > also_max) older.pop_front();
      }
      recent.pop_front();
    }
  }
  return {{recent.begin(), recent.end()}, {older.begin(), older.end()}};
}

Status EventJournal::Append(const AgentEvent& event) {
  std::string line = ToLine(event) + "\n";
  if (size_ + line.size() > max_bytes_ && size_ > 0) {
    if (Status s = Rotate(); !s.ok()) return s;
  }
  if (Status written = Write(line); !written.ok()) return written;
  KeepReserve();
  return Status::Ok();
}

Status EventJournal::Write(const std::string& line) {
  // A line cut short would glue itself to the next one and take it down too
  // when read back: AppendAll cuts it off.
  if (Status s = sys::AppendAll(fd_.get(), line, size_, "the event journal " + Current()); !s.ok()) return s;
  size_ += line.size();
  return Status::Ok();
}

void EventJournal::KeepReserve() {
  if (allocated_ >= size_ + kReserveBytes / 2) return;
  // Taken only from a disk with room to spare: never the last blocks a job
  // (or its checkpoint) needs.
  std::optional<uint64_t> free = sys::FreeBytes(dir_);
  if (!free || *free < 4 * kReserveBytes) return;
  if (sys::AllocateAhead(fd_.get(), size_, kReserveBytes).ok()) allocated_ = size_ + kReserveBytes;
}

Status EventJournal::Rotate() {
  if (Status s = sys::RenameFile(Current(), Previous()); !s.ok()) {
    return s.Wrap("cannot rotate the event journal " + Current());
  }
  Result<sys::AppendTarget> file = OpenForAppend(Current());
  if (!file.ok()) return file.status();
  fd_ = std::move(file->fd);
  size_ = 0;
  allocated_ = 0;
  KeepReserve();
  return Status::Ok();
}

}  // namespace gpuctl::events
