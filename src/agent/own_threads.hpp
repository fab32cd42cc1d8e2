// The agent's own threads carry a name that starts with "dpdb-" (visible in top -H, gdb and
// /proc/self/task/*/comm), so that the process can tell them from the program's threads: when it
// forks, CPython 3.12+ warns about every other thread of the process, ours included.
#pragma once

#include <pthread.h>

#include <thread>

namespace dpdb::agent {

// Names `thread` "dpdb-<role>" (Linux keeps 15 characters). Called by the thread that starts it,
// before that one goes on: a fork right after must find the name already there.
void name_own_thread(pthread_t thread, const char* role);

// Starts `body` on a detached thread named "dpdb-<role>".
template <typename Body>
void start_own_thread(const char* role, Body body) {
    std::thread thread(std::move(body));
    name_own_thread(thread.native_handle(), role);
    thread.detach();
}

}  // namespace dpdb::agent
