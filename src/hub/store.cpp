#include "hub/store.hpp"

#include <sqlite3.h>

#include <chrono>
#include <memory>
#include <stdexcept>

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

double now_seconds() {
    using namespace std::chrono;
    return duration_cast<duration<double>>(system_clock::now().time_since_epoch()).count();
}

// Enough history to explain what happened to a job; old records make room for new ones.
constexpr int kKeptExits = 10000;

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
    exec(
        "CREATE TABLE IF NOT EXISTS exits ("
        " id INTEGER PRIMARY KEY AUTOINCREMENT, ended REAL NOT NULL, process TEXT NOT NULL)");
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
    auto insert =
        prepare(db_, "INSERT INTO breakpoints (spec, condition, created) VALUES (?, ?, ?)");
    bind_text(insert.get(), 1, breakpoint.value("spec", std::string()));
    bind_text(insert.get(), 2, breakpoint.value("condition", std::string()));
    sqlite3_bind_double(insert.get(), 3, now_seconds());
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
    auto select = prepare(db_, "SELECT id, spec, condition, created FROM breakpoints ORDER BY id");
    wire::Json out = wire::Json::array();
    while (sqlite3_step(select.get()) == SQLITE_ROW) {
        out.push_back({{"id", sqlite3_column_int64(select.get(), 0)},
                       {"spec", column_text(select.get(), 1)},
                       {"condition", column_text(select.get(), 2)},
                       {"created", sqlite3_column_double(select.get(), 3)}});
    }
    return out;
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

wire::Json Store::exits(int limit) const {
    auto select = prepare(db_, "SELECT process FROM exits ORDER BY id DESC LIMIT ?");
    sqlite3_bind_int(select.get(), 1, limit);
    wire::Json out = wire::Json::array();
    while (sqlite3_step(select.get()) == SQLITE_ROW) {
        auto process = wire::Json::parse(column_text(select.get(), 0), nullptr, false);
        if (!process.is_discarded()) out.push_back(std::move(process));
    }
    return out;
}

}  // namespace dpdb::hub
