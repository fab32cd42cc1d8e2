// Tells Python code when the program sets or unsets PYTHONBREAKPOINT from inside the process
// (os.environ, os.putenv, os.unsetenv raise "os.putenv" and "os.unsetenv"): sys.breakpointhook
// reads that variable at every breakpoint(), and frameworks point it at debuggers of their own
// in their workers (Ray does as each worker connects), replacing the dpdb.set_trace that
// `dpdb run` put there. Through the agent's one audit hook (agent/audit_events).
#pragma once

#include <Python.h>

namespace dpdb::agent {

// callback(value) for each change, value None when unset; called in the thread that changes it,
// with the GIL held. Replaces the previous callback.
void watch_breakpoint_variable(PyObject* callback);

}  // namespace dpdb::agent
