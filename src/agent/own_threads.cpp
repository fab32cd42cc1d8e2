#include "agent/own_threads.hpp"

#include <cstdio>

namespace dpdb::agent {

void name_own_thread(pthread_t thread, const char* role) {
    char name[16];
    std::snprintf(name, sizeof(name), "dpdb-%s", role);
    pthread_setname_np(thread, name);
}

ProgramSignalsBlocked::ProgramSignalsBlocked() {
    sigset_t program;
    sigfillset(&program);
    static const int kFaults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS};
    for (const int fault : kFaults) sigdelset(&program, fault);
    for (int realtime = SIGRTMIN; realtime <= SIGRTMAX; ++realtime) sigdelset(&program, realtime);
    pthread_sigmask(SIG_BLOCK, &program, &previous_);
}

ProgramSignalsBlocked::~ProgramSignalsBlocked() {
    pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
}

}  // namespace dpdb::agent
