#include "agent/signal_kick.hpp"

#include <pthread.h>
#include <signal.h>

#include <chrono>

#include "agent/signal_view.h"

namespace dpdb::agent {

namespace {

// Long enough that a main thread running Python has long taken a signal; short beside a
// supervisor's wait between SIGTERM and SIGKILL (10 s and more).
constexpr auto kOverdue = std::chrono::milliseconds(500);

using Clock = std::chrono::steady_clock;

// The control thread's alone.
bool g_due = false;
Clock::time_point g_due_since;
void interrupt_only(int) {}

// A spare real-time signal (faulthandler's dumps have SIGRTMIN + 7) with an empty handler and
// no SA_RESTART: the interrupted call returns EINTR, on which CPython runs the due handlers.
// Its action is read again before every kick: a program that took the signal since (for a
// handler of its own, or to ignore it) keeps it, and gets no kick it did not ask for.
int kick_signal() {
    const int number = SIGRTMIN + 6;
    struct sigaction current {};
    if (sigaction(number, nullptr, &current) != 0) return 0;
    const bool ours = (current.sa_flags & SA_SIGINFO) == 0 && current.sa_handler == interrupt_only;
    if (ours) return number;
    if ((current.sa_flags & SA_SIGINFO) != 0 || current.sa_handler != SIG_DFL) return 0;
    struct sigaction action {};
    action.sa_handler = interrupt_only;
    sigemptyset(&action.sa_mask);
    return sigaction(number, &action, nullptr) == 0 ? number : 0;
}

}  // namespace

bool kick_overdue_signal() {
    unsigned long main_thread = 0;
    if (dpdb_python_signal_due(&main_thread) != 1) {
        g_due = false;
        return false;
    }
    const auto now = Clock::now();
    if (!g_due) {
        g_due = true;
        g_due_since = now;
        return false;
    }
    if (now - g_due_since < kOverdue) return false;
    const int kick = kick_signal();
    if (kick == 0) return false;
    g_due_since = now;  // once more at the next overdue turn if this one found no wait
    return pthread_kill(static_cast<pthread_t>(main_thread), kick) == 0;
}

}  // namespace dpdb::agent
