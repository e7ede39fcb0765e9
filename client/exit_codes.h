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
// Found before any agent was asked: a --tls-ca/--tls-cert/--tls-key file that
// is missing, unreadable or not PEM.
inline constexpr int kExitLocalConfig = 5;
// The SSH host key of the node is not trusted: unknown (give
// --accept-new-host-key once) or changed (possibly an attack).
inline constexpr int kExitHostKeyUntrusted = 6;
// `train wait --timeout`: the time ran out while the job still runs
// (as timeout(1) exits).
inline constexpr int kExitTimedOut = 124;

}  // namespace gpuctl::client
