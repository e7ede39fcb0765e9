// Remote commands travel as one string to the remote shell (that is how SSH
// exec works), so every word we build one from is quoted here.
#pragma once

#include <string>
#include <vector>

namespace gpuctl::client::ssh {

// 'it'\''s' style quoting: safe for any byte string in POSIX sh.
std::string ShellQuote(const std::string& word);
// The words quoted and joined by spaces.
std::string ShellJoin(const std::vector<std::string>& words);

}  // namespace gpuctl::client::ssh
