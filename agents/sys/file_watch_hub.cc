// One poll() over the inotify descriptor and a stop eventfd. Wakeups run on
// this thread with no lock held, so they may wait again or cancel others.
#include "agents/sys/file_watch_hub.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <vector>

namespace gpuctl::sys {
namespace {

using SteadyClock = std::chrono::steady_clock;

// Appends (MODIFY), truncation and chmod (ATTRIB), a writer closing
// (CLOSE_WRITE), and rotation or removal (MOVE_SELF, DELETE_SELF): each may
// mean there is something new, or nothing more, to read. A link planted in
// place of a log is not followed.
constexpr uint32_t kWatchMask =
    IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVE_SELF | IN_DELETE_SELF | IN_DONT_FOLLOW;

}  // namespace

FileWatchHub::FileWatchHub(FileWatchHubOptions options)
    : options_(options),
      // Without inotify (no instance left for this user) every file is polled.
      inotify_(::inotify_init1(IN_CLOEXEC | IN_NONBLOCK)),
      stop_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  thread_ = std::thread([this] { Run(); });
}

FileWatchHub::~FileWatchHub() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t wrote = ::write(stop_.get(), &one, sizeof one);
  if (thread_.joinable()) thread_.join();
}

uint64_t FileWatchHub::WaitOnce(const std::string& path, Wakeup wakeup) {
  std::lock_guard lock(mutex_);
  const uint64_t ticket = next_ticket_++;
  waiters_.emplace(ticket, Waiter{path, std::move(wakeup)});
  AddWatchLocked(path);
  return ticket;
}

void FileWatchHub::AddWatchLocked(const std::string& path) {
  Watch& watch = watches_[path];
  ++watch.waiters;
  if (watch.wd >= 0 || !inotify_.valid() || watch_paths_.size() >= options_.max_watched_files) return;
  // A failure (no such file yet, the host's watch limit) leaves it polled.
  int wd = ::inotify_add_watch(inotify_.get(), path.c_str(), kWatchMask);
  if (wd < 0) return;
  // Two names for one inode share a descriptor: the first name keeps it.
  if (auto [it, added] = watch_paths_.emplace(wd, path); added) watch.wd = wd;
}

void FileWatchHub::Cancel(uint64_t ticket) {
  std::unique_lock lock(mutex_);
  if (auto it = waiters_.find(ticket); it != waiters_.end()) {
    --watches_[it->second.path].waiters;
    waiters_.erase(it);
    return;
  }
  if (std::this_thread::get_id() == thread_.get_id()) return;
  fired_.wait(lock, [&] { return firing_ != ticket; });
}

size_t FileWatchHub::watched_files() const {
  std::lock_guard lock(mutex_);
  return watch_paths_.size();
}

size_t FileWatchHub::pending_waits() const {
  std::lock_guard lock(mutex_);
  return waiters_.size();
}

void FileWatchHub::Run() {
  auto next_tick = SteadyClock::now() + options_.poll_interval;
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    auto left = std::chrono::ceil<std::chrono::milliseconds>(next_tick - SteadyClock::now()).count();
    std::array<pollfd, 2> fds{pollfd{stop_.get(), POLLIN, 0}, pollfd{inotify_.get(), POLLIN, 0}};
    int ready = ::poll(fds.data(), inotify_.valid() ? 2 : 1, left > 0 ? static_cast<int>(left) : 0);
    if (ready > 0 && fds[1].revents != 0) ReadEvents();
    lock.lock();
    if (stopping_) break;
    if (SteadyClock::now() >= next_tick) {
      next_tick = SteadyClock::now() + options_.poll_interval;
      FireLocked(lock, /*everyone=*/true);
    } else if (!changed_paths_.empty()) {
      FireLocked(lock, /*everyone=*/false);
    }
  }
}

// Notes which watches saw a change. A watch the kernel dropped (the file was
// deleted, or its filesystem unmounted) is forgotten, so the next wait on
// that path watches whatever file has the name then.
void FileWatchHub::ReadEvents() {
  alignas(inotify_event) std::array<char, 8192> buf;
  std::lock_guard lock(mutex_);
  while (true) {
    ssize_t got = ::read(inotify_.get(), buf.data(), buf.size());
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return;  // EAGAIN: drained
    for (ssize_t at = 0; at + static_cast<ssize_t>(sizeof(inotify_event)) <= got;) {
      inotify_event event;
      std::memcpy(&event, buf.data() + at, sizeof event);
      at += static_cast<ssize_t>(sizeof(inotify_event) + event.len);
      if (event.mask & IN_Q_OVERFLOW) {
        for (const auto& [wd, path] : watch_paths_) changed_paths_.insert(path);
        continue;
      }
      auto it = watch_paths_.find(event.wd);
      if (it == watch_paths_.end()) continue;  // a watch removed since
      changed_paths_.insert(it->second);
      if (event.mask & IN_IGNORED) {
        if (auto w = watches_.find(it->second); w != watches_.end() && w->second.wd == event.wd) w->second.wd = -1;
        watch_paths_.erase(it);
      }
    }
  }
}

void FileWatchHub::FireLocked(std::unique_lock<std::mutex>& lock, bool everyone) {
  // Only the waits present now: a wakeup that waits again waits for the next change.
  std::vector<uint64_t> due;
  for (const auto& [ticket, waiter] : waiters_) {
    if (everyone) {
      due.push_back(ticket);
      continue;
    }
    if (changed_paths_.count(waiter.path)) due.push_back(ticket);
  }
  changed_paths_.clear();
  for (uint64_t ticket : due) {
    auto it = waiters_.find(ticket);
    if (it == waiters_.end() || stopping_) continue;  // cancelled by an earlier wakeup
    Wakeup wakeup = std::move(it->second.wakeup);
    --watches_[it->second.path].waiters;
    waiters_.erase(it);
    firing_ = ticket;
    lock.unlock();
    wakeup();
    lock.lock();
    firing_ = 0;
    fired_.notify_all();
  }
  if (!everyone) return;
  // Once a tick: drop the watches no one waits on (a follower between two
  // waits keeps its watch; one that ended frees it).
  for (auto it = watches_.begin(); it != watches_.end();) {
    if (it->second.waiters > 0) {
      ++it;
      continue;
    }
    if (it->second.wd >= 0) {
      ::inotify_rm_watch(inotify_.get(), it->second.wd);
      watch_paths_.erase(it->second.wd);
    }
    it = watches_.erase(it);
  }
}

}  // namespace gpuctl::sys
