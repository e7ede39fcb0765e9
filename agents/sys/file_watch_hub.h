// Wakes log followers when their file changes: one inotify instance and one
// thread for all of them, so a thousand idle `train logs -f` streams cost a
// thousand small records, not a thousand threads and inotify instances (the
// host has 128 of those per user, shared with every other program).
//
// A wait is one-shot: the wakeup runs once, on the hub's thread, when the
// file changes or at the next poll tick, whichever is first. The tick is the
// backstop for what inotify cannot say (a job's end, a log replaced by a
// rerun) and the only signal for files beyond the watch limit, which are
// polled instead of watched.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "agents/sys/unique_fd.h"

namespace gpuctl::sys {

struct FileWatchHubOptions {
  size_t max_watched_files = 64;
  std::chrono::milliseconds poll_interval{500};
};

class FileWatchHub {
 public:
  using Wakeup = std::function<void()>;

  explicit FileWatchHub(FileWatchHubOptions options = {});
  ~FileWatchHub();  // ends the thread; pending wakeups never run
  FileWatchHub(const FileWatchHub&) = delete;
  FileWatchHub& operator=(const FileWatchHub&) = delete;

  // Runs `wakeup` once when `path` changes (written, truncated, closed after
  // a write, moved or deleted) or at the next tick. Returns a ticket for
  // Cancel. The wakeup must not block: it may start a write, or wait again.
  uint64_t WaitOnce(const std::string& path, Wakeup wakeup);

  // After this returns, the ticket's wakeup is not running (unless Cancel is
  // called from that very wakeup) and never will. Unknown or fired tickets
  // are fine.
  void Cancel(uint64_t ticket);

  // For tests and status: files watched by inotify now, and waits pending.
  size_t watched_files() const;
  size_t pending_waits() const;

 private:
  struct Waiter {
    std::string path;
    Wakeup wakeup;
  };
  struct Watch {
    int wd = -1;
    size_t waiters = 0;
  };

  void Run();
  void AddWatchLocked(const std::string& path);
  void ReadEvents();
  void FireLocked(std::unique_lock<std::mutex>& lock, bool everyone);

  const FileWatchHubOptions options_;
  UniqueFd inotify_;
  UniqueFd stop_;  // eventfd: readable once the hub is ending
  mutable std::mutex mutex_;
  std::condition_variable fired_;
  std::map<uint64_t, Waiter> waiters_;               // ordered: fired oldest first
  std::unordered_map<std::string, Watch> watches_;   // by path
  std::unordered_map<int, std::string> watch_paths_; // wd -> path
  std::unordered_set<std::string> changed_paths_;    // seen by ReadEvents, not yet fired
  uint64_t next_ticket_ = 1;
  uint64_t firing_ = 0;  // the ticket whose wakeup is running now
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace gpuctl::sys
