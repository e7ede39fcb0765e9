// Whether a person is reading: colours and live screens for a terminal,
// plain lines for a pipe, a file or journald.
#pragma once

namespace gpuctl::sys {

bool StdoutIsTerminal();
bool StderrIsTerminal();

}  // namespace gpuctl::sys
