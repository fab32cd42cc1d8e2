// CPython's C signal handler only notes a signal; the main thread runs the Python handler at its
// next check, and a blocking call (a lock's acquire, a sleep) makes that check when the signal
// interrupts it. A signal that lands in the main thread just before it blocks, after its last
// check (while it hands the GIL to another thread, which dpdb's threads widen), interrupts
// nothing: the handler waits for the next signal, for ever if none comes (a SIGTERM that never
// ends a waiting service, issue 26). The control thread looks now and then; a handler overdue is
// woken with a signal of its own, whose empty handler interrupts the main thread's wait.
#pragma once

namespace dpdb::agent {

// Called by the control thread at each turn: if a Python signal handler has been due since an
// earlier turn at least kOverdueMs ago, interrupts the main thread's blocking call (returns
// true). Where the interpreter's record cannot be read (3.14), or the kick signal is the
// program's, does nothing.
bool kick_overdue_signal();

}  // namespace dpdb::agent
