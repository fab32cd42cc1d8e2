// How many logpoint messages a process may make: a token bucket (DPDB_LOG_RATE a second, in bursts
// of as many), the messages dropped beyond it, and whether a thread is making one. One budget per
// process, shared by the Python face (python/dpdb/_logpoints.py, through dpdb._agent) and the
// breakpoint engine, which drops a due message without calling Python while no token is left (it
// reaches this table through the capsule dpdb._agent.log_budget). Touched with the GIL held, but
// for the drops, which the logs sender (log_queue.hpp) takes without it.
#pragma once

#include <cstdint>
#include <utility>

namespace dpdb::agent {

// The engine's view, a C table behind a capsule: the two extension modules link separately.
struct LogBudget {
    // Whether a message could be made now (a token is there), none taken.
    bool (*has_token)();
    // One message dropped now: counted, with the time.
    void (*drop)();
    // Whether this thread is making a message (a field's code reached a logpoint again).
    bool (*making)();
};
inline constexpr const char* kLogBudgetCapsule = "dpdb._agent.log_budget";
const LogBudget* log_budget_table();

void log_budget_rate(double per_second);
// A token taken for one message, if the queue has room for it too; or the message dropped.
bool log_admit();
// The drops since the last call, and the time (time.time()) of the last one.
std::pair<std::uint64_t, double> log_take_drops();
std::uint64_t log_drops_pending();
void log_set_making(bool on);

}  // namespace dpdb::agent
