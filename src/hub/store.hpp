// What a hub keeps across restarts, in SQLite: global breakpoints (and logpoints), the record of
// processes that ended (how, and their last stacks), and the latest logpoint messages. Processes
// and sessions themselves are soft state that agents re-register.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <tuple>

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
    // oldest go beyond a bound of messages and one of bytes (kKeptLogs, kKeptLogBytes).
    void add_logs(wire::Json& lines);
    // The latest `limit` of them, of these pids (none: all), oldest first (by time, then seq).
    wire::Json logs(const std::set<std::int64_t>& pids, int limit) const;

    // A process that ended: its description plus "status"/"signal"/"reason"/"stacks"/"ended".
    void record_exit(const wire::Json& process);
    wire::Json exits(int limit) const;  // newest first

    // The hub's ids of the paused sessions, by (host, pid, the agent's session number), so that a
    // hub restarted with the same store gives each session that comes back its id again
    // (`dpdb attach 5` goes on finding it). take_session_ids() reads them all and empties the
    // table: a session that does not come back is forgotten; the others are remembered again.
    using SessionKey = std::tuple<std::string, std::int64_t, std::int64_t>;
    std::map<SessionKey, std::int64_t> take_session_ids();
    void remember_session(const SessionKey& key, std::int64_t id);
    void forget_session(std::int64_t id);
    // Rows read back are checked as a peer's message is (wire/contents): one that is not what
    // the hub writes (a store of another version, an edit by hand, a disk's fault) is removed
    // and told here, in one line, instead of reaching a reader that would fail on it.
    void on_bad_row(std::function<void(const std::string&)> report) { report_ = std::move(report); }

    static constexpr int kKeptLogs = 100000;
    static constexpr std::int64_t kKeptLogBytes = std::int64_t{64} << 20;

  private:
    void exec(const char* sql) const;
    void remove_bad_row(const char* table, std::int64_t id, const std::string& why) const;
    void trim_logs();
    sqlite3* db_ = nullptr;
    std::function<void(const std::string&)> report_;
    // What the logs table holds, kept here so that a batch's trim needs no scan.
    std::int64_t log_rows_ = 0;
    std::int64_t log_bytes_ = 0;
};

}  // namespace dpdb::hub
