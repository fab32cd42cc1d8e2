// Greenlets (gevent's, eventlet's) as the engine sees them: frames that run in a thread without
// being on its stack while they are suspended.
#pragma once

#include <Python.h>

namespace dpdb::engine {

// The innermost frame of every suspended greenlet (gevent's, eventlet's), where greenlet is
// imported: switched back to, a greenlet resumes its frame with no PY_RESUME (3.12+) and no new
// evaluation by the gate (3.9-3.11), so the code it runs must get its breakpoints' events when they
// are set (a pause of gevent's idle hub is armed in the suspended greenlets' code). No list of them
// is kept: the collector's is searched, in C (no Python code runs, which a step would stop in). A
// new list, or null with an exception set.
PyObject* suspended_greenlet_frames();

}  // namespace dpdb::engine
