// SIGTERM/SIGINT are waited for on one thread (convention 5). Block them in
// main before any other thread starts so every thread inherits the mask and
// the signals queue for WaitForShutdownSignal.
#pragma once

namespace gpuctl::sys {

void BlockShutdownSignals();
// Blocks until SIGTERM or SIGINT arrives (or RequestShutdown is called) and
// returns the signal number.
int WaitForShutdownSignal();
// Lets code inside the process ask for the same orderly shutdown.
void RequestShutdown();

}  // namespace gpuctl::sys
