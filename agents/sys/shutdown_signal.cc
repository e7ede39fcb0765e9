#include "agents/sys/shutdown_signal.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

namespace gpuctl::sys {
namespace {

sigset_t ShutdownSet() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  return set;
}

}  // namespace

void BlockShutdownSignals() {
  sigset_t set = ShutdownSet();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  // A client that disconnects mid-write must not kill the agent.
  signal(SIGPIPE, SIG_IGN);
}

int WaitForShutdownSignal() {
  sigset_t set = ShutdownSet();
  int sig = 0;
  while (sigwait(&set, &sig) != 0) {
  }
  return sig;
}

void RequestShutdown() { ::kill(::getpid(), SIGTERM); }

}  // namespace gpuctl::sys
