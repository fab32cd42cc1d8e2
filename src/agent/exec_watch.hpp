// Tells the hub when this process is about to exec another program, so that the hub shows the
// process with its new command instead of taking the closed connection (the agent's socket is
// close-on-exec) for a process killed without a word.
//
// os.execv and its kin raise the "os.exec" audit event before the exec: the agent's audit hook
// (agent/audit_events) sends the hub `exec {path,
// argv}` and waits, bounded, for a child's first connection, which a fork followed at once by an
// exec would otherwise close before its handshake. A child that subprocess forks execs from C
// without the event; it is told from Python (dpdb._identity.exec_target).
#pragma once

#include <Python.h>

#include <string>
#include <vector>

namespace dpdb::agent {

void watch_exec();

// Sends the hub the exec of `path` with `argv`, the GIL released while it waits.
void announce_exec(const std::string& path, const std::vector<std::string>& argv);

}  // namespace dpdb::agent
