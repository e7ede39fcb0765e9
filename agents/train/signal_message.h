// Recognises the lines that say a process of the job died by a signal, as
// torchrun, PyTorch's DataLoader, Python and the shell print them.
#pragma once

#include <optional>
#include <string_view>

#include "agents/train/log_event.h"

namespace gpuctl::train {

// `text` is one log line without its rank prefix. Returns a signal event
// (offset and rank left for the caller) for:
//  - torchrun: "Signal 9 (SIGKILL) received by PID 1234", "exitcode: -9" and
//    "exitcode  : -9 (pid: 1234)" (a negative exit code is a signal number),
//    "Received Signals.SIGTERM death signal";
//  - "... got signal: 15" (torchrun's SignalException), "killed by signal: Bus
//    error" (DataLoader), "terminated with signal SIGKILL" (torch.multiprocessing),
//    "exited with signal 9", "terminated by signal 11", "killed by signal 9";
//  - "Fatal Python error: Segmentation fault" (faulthandler);
//  - the shell: a line that is only "Killed", "Segmentation fault", "Aborted",
//    "Bus error", "Terminated", "Floating point exception" or "Illegal
//    instruction", or any signal's description followed by "(core dumped)",
//    and a job report such as "run.sh: line 3:  1234 Killed  python train.py";
//  - "exit=137": the trailer the capture wrapper writes (see the fixtures'
//    README); above 128 the shell's convention is 128 + the signal number.
// Not a signal event: torchrun's "Sending process 1234 closing signal SIGTERM"
// (it stops the other workers after a failure reported elsewhere) and
// "exitcode: 1" (a plain failure).
std::optional<LogEvent> ParseSignalMessage(std::string_view text);

// "SIGKILL" for 9 (Linux numbering); empty for an unknown number.
std::string_view SignalName(int number);

}  // namespace gpuctl::train
