// Polls `ready` every 10 ms for up to 5 s of real time: for tests of
// threads (stream reactors, watchers) whose progress no fake clock drives.
#pragma once

#include <chrono>
#include <functional>
#include <thread>

namespace gpuctl::testing {

inline bool WaitFor(const std::function<bool()>& ready) {
  for (int i = 0; i < 500; ++i) {
    if (ready()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return ready();
}

}  // namespace gpuctl::testing
