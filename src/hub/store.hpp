// What a hub keeps across restarts, in SQLite: global breakpoints (and logpoints), the record of
// processes that ended (how, and their last stacks), and the latest logpoint messages. Processes
// and sessions themselves are soft state that agents re-register.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "wire/message.hpp"

struct sqlite3;

namespace dpdb::hub {

class Store {
  public:
    // ":memory:" for a hub that keeps nothing (dpdb run's private one). Throws std::runtime_error.
    explicit Store(const std::string& path);
    ~Store();
    Store(const Store&) = delete;
    Store& operator=(const Store&) = delete;

    // A global breakpoint: {"spec": "file.py:12" or "function", "condition": "...", "log": "...",
    // "ignore": N} ("log": a logpoint's message; "ignore": hits to pass before it stops). Returns
    // its id, which stays the same across restarts.
    std::int64_t add_breakpoint(const wire::Json& breakpoint);
    bool remove_breakpoint(std::int64_t id);
    void clear_breakpoints();
    wire::Json breakpoints() const;  // [{"id", "spec", "condition", "created", "log"?, "ignore"?}]

    // Logpoint messages as the hub stamped them ({"time", "pid", ...}); each gets its "seq". The
    // oldest go beyond a bound.
    void add_logs(wire::Json& lines);
    // The latest `limit` of them, of these pids (none: all), oldest first (by time, then seq).
    wire::Json logs(const std::set<std::int64_t>& pids, int limit) const;

    // A process that ended: its description plus "status"/"signal"/"reason"/"stacks"/"ended".
    void record_exit(const wire::Json& process);
    wire::Json exits(int limit) const;  // newest first

  private:
    void exec(const char* sql) const;
    sqlite3* db_ = nullptr;
};

}  // namespace dpdb::hub
