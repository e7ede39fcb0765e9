#include "agents/sys/terminal.h"

#include <unistd.h>

namespace gpuctl::sys {

bool StdoutIsTerminal() { return ::isatty(STDOUT_FILENO) == 1; }
bool StderrIsTerminal() { return ::isatty(STDERR_FILENO) == 1; }

}  // namespace gpuctl::sys
