// What the agent learns without the GIL: every thread's Python stack when the process does not
// answer in Python (a thread holds the GIL in C code), and the stacks and signal of a fatal
// signal before the process dies. Both come from CPython's faulthandler, registered by the agent
// on a spare real-time signal to write into a pipe that a reader thread here drains. The same
// thread sends the queued logpoint messages when an ending signal (SIGTERM, SIGHUP) comes.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace dpdb::agent {

// The pipe faulthandler writes into (created on first use, again after fork).
int dump_pipe();

// Called once faulthandler is registered for `signal`: from now on dumps can be taken.
void enable_dumps(int signal);

// Undoes enable_dumps, install_crash_handlers and flush_at_ending_signals, and ends the reader
// thread (a start-up that failed leaves nothing behind). Python unregisters faulthandler's signal
// first.
void disable_dumps();

// Installs handlers for SIGSEGV, SIGBUS, SIGFPE, SIGABRT and SIGILL that send the signal and the
// stacks of every thread to the hub, then let the previous handler (the program's own, or
// faulthandler's, or the default) do what it would have done.
void install_crash_handlers();

// SIGTERM and SIGHUP, where the kernel has them at their default action: the queued logpoint
// messages are sent first (waiting at most `wait` for a send under way, `connect_wait` for a
// connection), by the reader thread, then the process ends as it would have. The program keeps
// running meanwhile; a second such signal ends it at once. A handler the program sets later
// replaces this one. Undone by disable_dumps.
void flush_at_ending_signals(std::chrono::milliseconds wait,
                             std::chrono::milliseconds connect_wait);

// A dump of every thread's stack taken on the calling thread without the GIL, sent as the
// stacks_reply to request `req` unless Python answered it first.
void answer_stacks_natively(std::int64_t req);

// Python began to answer request `req`: a native answer waits for it (boundedly).
void stacks_started(std::int64_t req);

// Python answered request `req`: a native answer is no longer wanted.
void stacks_answered(std::int64_t req);

}  // namespace dpdb::agent
