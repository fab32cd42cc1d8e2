#include "agent/log_budget.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>

#include "agent/log_queue.hpp"

namespace dpdb::agent {
namespace {

double g_rate = 200.0;
double g_tokens = 200.0;
std::chrono::steady_clock::time_point g_refilled = std::chrono::steady_clock::now();
// Counted with the GIL held, taken by the logs sender without it.
std::atomic<std::uint64_t> g_dropped{0};
std::atomic<double> g_last_drop{0.0};
thread_local bool t_making = false;

void refill() {
    const auto now = std::chrono::steady_clock::now();
    const double seconds = std::chrono::duration<double>(now - g_refilled).count();
    g_tokens = std::min(g_rate, g_tokens + seconds * g_rate);
    g_refilled = now;
}

bool has_token() {
    refill();
    return g_tokens >= 1;
}

void drop() {
    ++g_dropped;
    g_last_drop =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

bool making() {
    return t_making;
}

const LogBudget g_table{has_token, drop, making};

}  // namespace

const LogBudget* log_budget_table() {
    return &g_table;
}

void log_budget_rate(double per_second) {
    g_rate = std::max(1.0, per_second);
    g_tokens = g_rate;
    g_refilled = std::chrono::steady_clock::now();
}

bool log_admit() {
    if (has_token() && log_queue_has_room()) {
        g_tokens -= 1;
        return true;
    }
    drop();
    log_queue_wake();
    return false;
}

std::pair<std::uint64_t, double> log_take_drops() {
    const double when = g_last_drop;
    return {g_dropped.exchange(0), when};
}

std::uint64_t log_drops_pending() {
    return g_dropped;
}

void log_set_making(bool on) {
    t_making = on;
}

}  // namespace dpdb::agent
