// The agent's own threads carry a name that starts with "dpdb-" (visible in top -H, gdb and
// /proc/self/task/*/comm), so that the process can tell them from the program's threads: when it
// forks, CPython 3.12+ warns about every other thread of the process, ours included.
//
// They also block the signals sent to the process as a whole (SIGTERM, SIGINT, SIGHUP, SIGCHLD…):
// the kernel gives such a signal to any thread that does not block it, and a program whose main
// thread waits in C (a pool worker in sem_wait) hears of it only when that thread is interrupted.
// Given to one of ours instead, a Pool's terminate() never ended its worker.
#pragma once

#include <pthread.h>
#include <signal.h>

#include <thread>

namespace dpdb::agent {

// Names `thread` "dpdb-<role>" (Linux keeps 15 characters). Called by the thread that starts it,
// before that one goes on: a fork right after must find the name already there.
void name_own_thread(pthread_t thread, const char* role);

// While alive, the calling thread blocks the process-directed signals; a thread started
// meanwhile keeps that mask for good. Faults (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP,
// SIGSYS) belong to the thread that causes them, and real-time signals stay open: the agent's
// stack dumps raise one in its own thread.
class ProgramSignalsBlocked {
  public:
    ProgramSignalsBlocked();
    ~ProgramSignalsBlocked();
    ProgramSignalsBlocked(const ProgramSignalsBlocked&) = delete;
    ProgramSignalsBlocked& operator=(const ProgramSignalsBlocked&) = delete;

  private:
    sigset_t previous_;
};

// Starts `body` on a detached thread named "dpdb-<role>" that blocks the program's signals.
template <typename Body>
void start_own_thread(const char* role, Body body) {
    const ProgramSignalsBlocked blocked;
    std::thread thread(std::move(body));
    name_own_thread(thread.native_handle(), role);
    thread.detach();
}

}  // namespace dpdb::agent
