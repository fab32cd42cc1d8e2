#include "hub/store.hpp"

#include <sqlite3.h>

#include <memory>
#include <set>
#include <stdexcept>
#include <utility>
#include <vector>

#include "hub/wall_clock.hpp"
#include "wire/contents.hpp"

namespace dpdb::hub {
namespace {

struct StatementDeleter {
    void operator()(sqlite3_stmt* statement) const { sqlite3_finalize(statement); }
};
using Statement = std::unique_ptr<sqlite3_stmt, StatementDeleter>;

Statement prepare(sqlite3* db, const char* sql) {
    sqlite3_stmt* statement = nullptr;
    if (sqlite3_prepare_v2(db, sql, -1, &statement, nullptr) != SQLITE_OK) {
        throw std::runtime_error(std::string("hub store: ") + sqlite3_errmsg(db));
    }
    return Statement(statement);
}

void bind_text(sqlite3_stmt* statement, int index, const std::string& text) {
    sqlite3_bind_text(statement, index, text.c_str(), static_cast<int>(text.size()),
                      SQLITE_TRANSIENT);
}

std::string column_text(sqlite3_stmt* statement, int index) {
    const auto* text = sqlite3_column_text(statement, index);
    return text != nullptr ? reinterpret_cast<const char*>(text) : "";
}

// Enough history to explain what happened to a job; old records make room for new ones.
constexpr int kKeptExits = 10000;

bool has_column(sqlite3* db, const char* table, const char* column) {
    auto info = prepare(db, (std::string("PRAGMA table_info(") + table + ")").c_str());
    while (sqlite3_step(info.get()) == SQLITE_ROW) {
        if (column_text(info.get(), 1) == column) return true;
    }
    return false;
}

}  // namespace

Store::Store(const std::string& path) {
    if (sqlite3_open_v2(path.c_str(), &db_,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                        nullptr) != SQLITE_OK) {
        const std::string reason = db_ != nullptr ? sqlite3_errmsg(db_) : "out of memory";
        sqlite3_close(db_);
        throw std::runtime_error("cannot open the hub store " + path + ": " + reason);
    }
    sqlite3_busy_timeout(db_, 2000);
    exec("PRAGMA journal_mode=WAL");
    // No fsync at every commit (WAL still keeps the file consistent; a power cut may lose the
    // last records): when a job of 10,000 processes ends, the hub writes 10,000 records at once.
    exec("PRAGMA synchronous=NORMAL");
    exec(
        "CREATE TABLE IF NOT EXISTS breakpoints ("
        " id INTEGER PRIMARY KEY AUTOINCREMENT, spec TEXT NOT NULL, condition TEXT NOT NULL,"
        " created REAL NOT NULL)");
    // A store written before logpoints existed gains their message as an empty default.
    if (!has_column(db_, "breakpoints", "log")) {
        exec("ALTER TABLE breakpoints ADD COLUMN log TEXT NOT NULL DEFAULT ''");
    }
    // ... and before hit counts existed, an ignore count of 0.
    if (!has_column(db_, "breakpoints", "ignore")) {
        exec("ALTER TABLE breakpoints ADD COLUMN ignore INTEGER NOT NULL DEFAULT 0");
    }
    exec(
        "CREATE TABLE IF NOT EXISTS logs ("
        " id INTEGER PRIMARY KEY AUTOINCREMENT, time REAL NOT NULL, pid INTEGER NOT NULL,"
        " line TEXT NOT NULL)");
    exec("CREATE INDEX IF NOT EXISTS logs_by_time ON logs (time, id)");
    exec(
        "CREATE TABLE IF NOT EXISTS exits ("
        " id INTEGER PRIMARY KEY AUTOINCREMENT, ended REAL NOT NULL, process TEXT NOT NULL)");
    exec(
        "CREATE TABLE IF NOT EXISTS session_ids ("
        " id INTEGER PRIMARY KEY, host TEXT NOT NULL, pid INTEGER NOT NULL,"
        " agent_sid INTEGER NOT NULL)");
    auto size = prepare(db_, "SELECT COUNT(*), COALESCE(SUM(LENGTH(line)), 0) FROM logs");
    if (sqlite3_step(size.get()) == SQLITE_ROW) {
        log_rows_ = sqlite3_column_int64(size.get(), 0);
        log_bytes_ = sqlite3_column_int64(size.get(), 1);
    }
}

Store::~Store() {
    sqlite3_close(db_);
}

void Store::exec(const char* sql) const {
    char* error = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &error) != SQLITE_OK) {
        const std::string reason = error != nullptr ? error : "unknown error";
        sqlite3_free(error);
        throw std::runtime_error("hub store: " + reason);
    }
}

std::int64_t Store::add_breakpoint(const wire::Json& breakpoint) {
    auto insert = prepare(db_,
                          "INSERT INTO breakpoints (spec, condition, log, created, ignore) "
                          "VALUES (?, ?, ?, ?, ?)");
    bind_text(insert.get(), 1, breakpoint.value("spec", std::string()));
    bind_text(insert.get(), 2, breakpoint.value("condition", std::string()));
    bind_text(insert.get(), 3, breakpoint.value("log", std::string()));
    sqlite3_bind_double(insert.get(), 4, now_seconds());
    sqlite3_bind_int64(insert.get(), 5, breakpoint.value("ignore", std::int64_t{0}));
    if (sqlite3_step(insert.get()) != SQLITE_DONE) {
        throw std::runtime_error(std::string("hub store: ") + sqlite3_errmsg(db_));
    }
    return sqlite3_last_insert_rowid(db_);
}

bool Store::remove_breakpoint(std::int64_t id) {
    auto remove = prepare(db_, "DELETE FROM breakpoints WHERE id = ?");
    sqlite3_bind_int64(remove.get(), 1, id);
    sqlite3_step(remove.get());
    return sqlite3_changes(db_) > 0;
}

void Store::clear_breakpoints() {
    exec("DELETE FROM breakpoints");
}

wire::Json Store::breakpoints() const {
    auto select = prepare(
        db_, "SELECT id, spec, condition, created, log, ignore FROM breakpoints ORDER BY id");
    wire::Json out = wire::Json::array();
    while (sqlite3_step(select.get()) == SQLITE_ROW) {
        wire::Json bp = {{"id", sqlite3_column_int64(select.get(), 0)},
                         {"spec", column_text(select.get(), 1)},
                         {"condition", column_text(select.get(), 2)},
                         {"created", sqlite3_column_double(select.get(), 3)}};
        // Only a logpoint carries "log": an agent of a version without logpoints would stop.
        auto log = column_text(select.get(), 4);
        if (!log.empty()) bp["log"] = std::move(log);
        // Likewise "ignore" (the hits to pass before it stops), only when there are some.
        if (const auto ignore = sqlite3_column_int64(select.get(), 5); ignore > 0) {
            bp["ignore"] = ignore;
        }
        out.push_back(std::move(bp));
    }
    return out;
}

std::map<Store::SessionKey, std::int64_t> Store::take_session_ids() {
    std::map<SessionKey, std::int64_t> ids;
    auto rows = prepare(db_, "SELECT id, host, pid, agent_sid FROM session_ids");
    while (sqlite3_step(rows.get()) == SQLITE_ROW) {
        const auto* host = reinterpret_cast<const char*>(sqlite3_column_text(rows.get(), 1));
        ids[{host != nullptr ? host : "", sqlite3_column_int64(rows.get(), 2),
             sqlite3_column_int64(rows.get(), 3)}] = sqlite3_column_int64(rows.get(), 0);
    }
    exec("DELETE FROM session_ids");
    return ids;
}

void Store::remember_session(const SessionKey& key, std::int64_t id) {
    auto insert = prepare(
        db_, "INSERT OR REPLACE INTO session_ids (id, host, pid, agent_sid) VALUES (?, ?, ?, ?)");
    sqlite3_bind_int64(insert.get(), 1, id);
    bind_text(insert.get(), 2, std::get<0>(key));
    sqlite3_bind_int64(insert.get(), 3, std::get<1>(key));
    sqlite3_bind_int64(insert.get(), 4, std::get<2>(key));
    sqlite3_step(insert.get());  // not kept (a full disk): the id may change at a restart
}

void Store::forget_session(std::int64_t id) {
    auto remove = prepare(db_, "DELETE FROM session_ids WHERE id = ?");
    sqlite3_bind_int64(remove.get(), 1, id);
    sqlite3_step(remove.get());
}

void Store::record_exit(const wire::Json& process) {
    auto insert = prepare(db_, "INSERT INTO exits (ended, process) VALUES (?, ?)");
    sqlite3_bind_double(insert.get(), 1, process.value("ended", now_seconds()));
    bind_text(insert.get(), 2, process.dump(-1, ' ', false, wire::Json::error_handler_t::replace));
    auto trim = prepare(db_, "DELETE FROM exits WHERE id <= (SELECT MAX(id) FROM exits) - ?");
    sqlite3_bind_int(trim.get(), 1, kKeptExits);
    // One transaction for the record and the trim. A record that cannot be written (a full
    // disk) is lost, and says nothing: the hub calls this as a peer's connection closes.
    const bool in_transaction = sqlite3_exec(db_, "BEGIN", nullptr, nullptr, nullptr) == SQLITE_OK;
    sqlite3_step(insert.get());
    sqlite3_step(trim.get());
    if (in_transaction && sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) {
        sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    }
}

void Store::add_logs(wire::Json& lines) {
    auto insert = prepare(db_, "INSERT INTO logs (time, pid, line) VALUES (?, ?, ?)");
    // One transaction per batch, as for exits: a flood of messages is a few commits a second.
    const bool in_transaction = sqlite3_exec(db_, "BEGIN", nullptr, nullptr, nullptr) == SQLITE_OK;
    for (auto& line : lines) {
        const auto text = line.dump(-1, ' ', false, wire::Json::error_handler_t::replace);
        sqlite3_reset(insert.get());
        sqlite3_bind_double(insert.get(), 1, line.value("time", 0.0));
        sqlite3_bind_int64(insert.get(), 2, line.value("pid", std::int64_t{0}));
        bind_text(insert.get(), 3, text);
        if (sqlite3_step(insert.get()) == SQLITE_DONE) {
            line["seq"] = sqlite3_last_insert_rowid(db_);
            ++log_rows_;
            log_bytes_ += static_cast<std::int64_t>(text.size());
        }
    }
    trim_logs();
    if (in_transaction && sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) {
        sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    }
}

// The oldest messages go until both bounds hold, a slice of them at a time.
void Store::trim_logs() {
    auto oldest = prepare(db_, "SELECT id, LENGTH(line) FROM logs ORDER BY id LIMIT 1024");
    auto remove = prepare(db_, "DELETE FROM logs WHERE id <= ?");
    while (log_rows_ > kKeptLogs || log_bytes_ > kKeptLogBytes) {
        sqlite3_reset(oldest.get());
        std::int64_t last = -1;
        while ((log_rows_ > kKeptLogs || log_bytes_ > kKeptLogBytes) &&
               sqlite3_step(oldest.get()) == SQLITE_ROW) {
            last = sqlite3_column_int64(oldest.get(), 0);
            --log_rows_;
            log_bytes_ -= sqlite3_column_int64(oldest.get(), 1);
        }
        if (last < 0) {  // nothing left to count: the counts were off
            log_rows_ = 0;
            log_bytes_ = 0;
            return;
        }
        sqlite3_reset(remove.get());
        sqlite3_bind_int64(remove.get(), 1, last);
        sqlite3_step(remove.get());
    }
}

void Store::remove_bad_row(const char* table, std::int64_t id, const std::string& why) const {
    auto remove = prepare(db_, (std::string("DELETE FROM ") + table + " WHERE id = ?").c_str());
    sqlite3_bind_int64(remove.get(), 1, id);
    sqlite3_step(remove.get());
    if (report_) {
        report_(std::string("hub store: removed row ") + std::to_string(id) + " of " + table +
                ", which is not what the hub writes: " + why);
    }
}

wire::Json Store::logs(const std::set<std::int64_t>& pids, int limit) const {
    // The latest `limit` messages, then put back in time order.
    auto select = prepare(db_, "SELECT id, line, pid FROM logs ORDER BY time DESC, id DESC");
    wire::Json newest = wire::Json::array();
    std::vector<std::pair<std::int64_t, std::string>> bad;
    while (static_cast<int>(newest.size()) < limit && sqlite3_step(select.get()) == SQLITE_ROW) {
        if (!pids.empty() && pids.count(sqlite3_column_int64(select.get(), 2)) == 0) continue;
        const auto id = sqlite3_column_int64(select.get(), 0);
        auto line = wire::Json::parse(column_text(select.get(), 1), nullptr, false);
        try {
            if (line.is_discarded()) throw wire::ProtocolError("not JSON");
            line["seq"] = id;
            wire::check_stamped_log_line(line);
        } catch (const wire::ProtocolError& error) {
            bad.emplace_back(id, error.what());
            continue;
        }
        newest.push_back(std::move(line));
    }
    select.reset();
    for (const auto& [id, why] : bad) remove_bad_row("logs", id, why);
    wire::Json oldest_first = wire::Json::array();
    for (auto it = newest.rbegin(); it != newest.rend(); ++it)
        oldest_first.push_back(std::move(*it));
    return oldest_first;
}

wire::Json Store::exits(int limit) const {
    auto select = prepare(db_, "SELECT id, process FROM exits ORDER BY id DESC LIMIT ?");
    sqlite3_bind_int(select.get(), 1, limit);
    wire::Json out = wire::Json::array();
    std::vector<std::pair<std::int64_t, std::string>> bad;
    while (sqlite3_step(select.get()) == SQLITE_ROW) {
        auto process = wire::Json::parse(column_text(select.get(), 1), nullptr, false);
        try {
            if (process.is_discarded()) throw wire::ProtocolError("not JSON");
            wire::check_exit_record(process);
        } catch (const wire::ProtocolError& error) {
            bad.emplace_back(sqlite3_column_int64(select.get(), 0), error.what());
            continue;
        }
        out.push_back(std::move(process));
    }
    select.reset();
    for (const auto& [id, why] : bad) remove_bad_row("exits", id, why);
    return out;
}

}  // namespace dpdb::hub
