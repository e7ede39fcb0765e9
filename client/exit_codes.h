// gpuctl's exit codes: a contract for users' scripts. Add, never renumber.
#pragma once

namespace gpuctl::client {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;      // the agent answered with an error
inline constexpr int kExitUsage = 2;        // bad flags or input; nothing was done
inline constexpr int kExitUnreachable = 3;  // the agent could not be reached
// --nodes: some of the nodes could not be reached (each is a row with its
// error); the others answered.
inline constexpr int kExitSomeNodesUnreached = 4;

}  // namespace gpuctl::client
