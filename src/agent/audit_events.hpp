// The agent's one C audit hook. The watchers (code_watch, exec_watch, env_watch) each want a few
// events; a hook of their own each would make every audited event of the program (sys._getframe,
// open, socket calls, ...) call three functions; through this one it costs a table lookup on the
// event's first letter, and a string comparison only for names that start like a watched one.
//
// Audit hooks cannot be removed, and run in the order they were added: this one goes in when the
// first watcher starts, before the breakpoint engine's own (3.12: it looks at the same "exec").
#pragma once

#include <Python.h>

namespace dpdb::agent {

// Called with the GIL held, in the thread that raised the event; must not raise (an error is
// written as unraisable by the handler itself: the program's operation goes ahead regardless).
using AuditHandler = void (*)(const char* event, PyObject* args);

// handler(event, args) for each audit event named `event` (a string literal: it is kept by
// address). False if the hook cannot be added (another hook refuses new ones), or the table of
// watched events (a handful) is full.
bool watch_audit_event(const char* event, AuditHandler handler);

}  // namespace dpdb::agent
