// A Tmux kept in memory: sessions are a set, NewSession records the spec it
// was given, and each call can be made to fail. Thread-safe, since the job
// supervisor asks from its monitor thread too.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agents/sys/tmux.h"

namespace gpuctl::testing {

class FakeTmux final : public sys::Tmux {
 public:
  // Runs after a session was added by NewSession, outside the lock (e.g. to
  // make its pane's process alive in a FakeProcessControl).
  using NewSessionHook = std::function<void(const sys::TmuxSessionSpec&)>;

  Status NewSession(const sys::TmuxSessionSpec& spec) override {
    NewSessionHook hook;
    {
      std::lock_guard lock(mutex_);
      ++calls_;
      new_sessions_.push_back(spec);
      if (!new_session_status_.ok()) return new_session_status_;
      if (sessions_.contains(spec.session)) {
        return Status(ErrorCode::kAlreadyExists, "duplicate session: " + spec.session);
      }
      sessions_.insert(spec.session);
      hook = on_new_session_;
    }
    if (hook) hook(spec);
    return Status::Ok();
  }

  bool HasSession(const std::string& session) override {
    std::lock_guard lock(mutex_);
    ++calls_;
    return sessions_.contains(session);
  }

  Result<int64_t> PanePid(const std::string& session) override {
    std::lock_guard lock(mutex_);
    ++calls_;
    if (!sessions_.contains(session)) return NotFound("no session " + session);
    if (!pane_pid_status_.ok()) return pane_pid_status_;
    auto it = pane_pids_.find(session);
    return it != pane_pids_.end() ? it->second : pane_pid_;
  }

  Status KillSession(const std::string& session) override {
    std::lock_guard lock(mutex_);
    ++calls_;
    killed_.push_back(session);
    if (!kill_session_status_.ok()) return kill_session_status_;
    sessions_.erase(session);
    return Status::Ok();
  }

  Result<std::vector<std::string>> ListSessions() override {
    std::lock_guard lock(mutex_);
    ++calls_;
    return std::vector<std::string>(sessions_.begin(), sessions_.end());
  }

  Result<std::string> SessionEnvironment(const std::string& session, const std::string& name) override {
    std::lock_guard lock(mutex_);
    ++calls_;
    if (!sessions_.contains(session)) return NotFound("no session " + session);
    for (auto spec = new_sessions_.rbegin(); spec != new_sessions_.rend(); ++spec) {  // the latest run
      if (spec->session != session) continue;
      auto it = spec->env.find(name);
      if (it != spec->env.end()) return it->second;
    }
    auto it = session_env_.find(session + "\n" + name);
    if (it != session_env_.end()) return it->second;
    return NotFound(name + " not set in " + session);
  }

  // --- set by tests ---
  // A session the agent did not start (an orphan), with its environment.
  void SetSessionEnvironment(const std::string& session, const std::string& name, const std::string& value) {
    Locked([&] { session_env_[session + "\n" + name] = value; });
  }
  void SetNewSessionStatus(Status s) { Locked([&] { new_session_status_ = std::move(s); }); }
  void SetPanePidStatus(Status s) { Locked([&] { pane_pid_status_ = std::move(s); }); }
  void SetKillSessionStatus(Status s) { Locked([&] { kill_session_status_ = std::move(s); }); }
  // The pid PanePid gives for any session without one of its own.
  void SetPanePid(int64_t pid) { Locked([&] { pane_pid_ = pid; }); }
  void SetPanePid(const std::string& session, int64_t pid) { Locked([&] { pane_pids_[session] = pid; }); }
  void AddSession(const std::string& session) { Locked([&] { sessions_.insert(session); }); }
  void RemoveSession(const std::string& session) { Locked([&] { sessions_.erase(session); }); }
  void SetOnNewSession(NewSessionHook hook) { Locked([&] { on_new_session_ = std::move(hook); }); }

  // --- read by tests ---
  std::vector<sys::TmuxSessionSpec> new_sessions() const { return Copy(new_sessions_); }
  std::vector<std::string> killed() const { return Copy(killed_); }
  std::set<std::string> sessions() const { return Copy(sessions_); }
  // Every call of any method, failed ones included.
  int calls() const { return Copy(calls_); }

 private:
  template <typename Fn>
  void Locked(Fn&& fn) {
    std::lock_guard lock(mutex_);
    fn();
  }
  template <typename T>
  T Copy(const T& value) const {
    std::lock_guard lock(mutex_);
    return value;
  }

  mutable std::mutex mutex_;
  std::set<std::string> sessions_;
  std::vector<sys::TmuxSessionSpec> new_sessions_;
  std::vector<std::string> killed_;
  std::map<std::string, int64_t> pane_pids_;
  std::map<std::string, std::string> session_env_;
  int64_t pane_pid_ = 4242;
  Status new_session_status_;
  Status pane_pid_status_;
  Status kill_session_status_;
  NewSessionHook on_new_session_;
  int calls_ = 0;
};

}  // namespace gpuctl::testing
