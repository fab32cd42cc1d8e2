#include "hub/store.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>

namespace {

class TempDir {
  public:
    TempDir() {
        char pattern[] = "/tmp/dpdb-store-test.XXXXXX";
        path_ = ::mkdtemp(pattern);
    }
    ~TempDir() { std::system(("rm -rf " + path_).c_str()); }
    std::string file(const char* name) const { return path_ + "/" + name; }

  private:
    std::string path_;
};

TEST(Store, BreakpointsSurviveReopening) {
    TempDir dir;
    std::int64_t first = 0;
    {
        dpdb::hub::Store store(dir.file("hub.sqlite"));
        first = store.add_breakpoint({{"spec", "boosting.py:167"}, {"condition", "i > 3"}});
        store.add_breakpoint({{"spec", "train_step"}});
    }
    dpdb::hub::Store reopened(dir.file("hub.sqlite"));
    const auto all = reopened.breakpoints();
    ASSERT_EQ(all.size(), 2u);
    EXPECT_EQ(all[0]["id"], first);
    EXPECT_EQ(all[0]["spec"], "boosting.py:167");
    EXPECT_EQ(all[0]["condition"], "i > 3");
    EXPECT_EQ(all[1]["condition"], "");
    EXPECT_TRUE(reopened.remove_breakpoint(first));
    EXPECT_FALSE(reopened.remove_breakpoint(first));
    // Ids are never reused, so a stale id never removes a newer breakpoint.
    EXPECT_GT(reopened.add_breakpoint({{"spec", "x.py:1"}}), first + 1);
    reopened.clear_breakpoints();
    EXPECT_TRUE(reopened.breakpoints().empty());
}

TEST(Store, ExitsAreKeptNewestFirst) {
    TempDir dir;
    {
        dpdb::hub::Store store(dir.file("hub.sqlite"));
        store.record_exit({{"pid", 10}, {"status", 0}});
        store.record_exit({{"pid", 11}, {"signal", "SIGKILL"}, {"text", "caf\xc3"}});
    }
    dpdb::hub::Store reopened(dir.file("hub.sqlite"));
    const auto exits = reopened.exits(10);
    ASSERT_EQ(exits.size(), 2u);
    EXPECT_EQ(exits[0]["pid"], 11);
    EXPECT_EQ(exits[0]["signal"], "SIGKILL");
    EXPECT_EQ(exits[1]["pid"], 10);
    EXPECT_EQ(reopened.exits(1).size(), 1u);
}

TEST(Store, InMemoryKeepsNothingOnDisk) {
    dpdb::hub::Store store(":memory:");
    store.add_breakpoint({{"spec", "a.py:1"}});
    EXPECT_EQ(store.breakpoints().size(), 1u);
}

TEST(Store, LogpointsKeepTheirMessage) {
    TempDir dir;
    {
        dpdb::hub::Store store(dir.file("hub.sqlite"));
        store.add_breakpoint({{"spec", "a.py:3"}, {"condition", ""}, {"log", "x={x}"}});
        store.add_breakpoint({{"spec", "a.py:4"}});
    }
    const auto all = dpdb::hub::Store(dir.file("hub.sqlite")).breakpoints();
    ASSERT_EQ(all.size(), 2u);
    EXPECT_EQ(all[0]["log"], "x={x}");
    EXPECT_FALSE(all[1].contains("log"));  // a breakpoint that stops
}

TEST(Store, AStoreFromBeforeLogpointsKeepsItsBreakpoints) {
    TempDir dir;
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(dir.file("hub.sqlite").c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db,
                           "CREATE TABLE breakpoints (id INTEGER PRIMARY KEY AUTOINCREMENT,"
                           " spec TEXT NOT NULL, condition TEXT NOT NULL, created REAL NOT NULL);"
                           "INSERT INTO breakpoints (spec, condition, created)"
                           " VALUES ('old.py:3', 'i > 1', 0)",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
    dpdb::hub::Store store(dir.file("hub.sqlite"));
    store.add_breakpoint({{"spec", "new.py:4"}, {"log", "n={n}"}});
    const auto all = store.breakpoints();
    ASSERT_EQ(all.size(), 2u);
    EXPECT_EQ(all[0]["spec"], "old.py:3");
    EXPECT_FALSE(all[0].contains("log"));
    EXPECT_EQ(all[1]["log"], "n={n}");
}

TEST(Store, LogMessagesComeBackInTimeOrderAfterReopening) {
    TempDir dir;
    {
        dpdb::hub::Store store(dir.file("hub.sqlite"));
        // Batches from two processes, each in its own order, arriving one after the other.
        auto first = nlohmann::json::array({{{"time", 2.0}, {"pid", 7}, {"text", "b"}},
                                            {{"time", 4.0}, {"pid", 7}, {"text", "d"}}});
        auto second = nlohmann::json::array({{{"time", 1.0}, {"pid", 8}, {"text", "a"}},
                                             {{"time", 3.0}, {"pid", 8}, {"text", "c"}}});
        store.add_logs(first);
        store.add_logs(second);
        EXPECT_LT(first[1]["seq"].get<std::int64_t>(), second[0]["seq"].get<std::int64_t>());
    }
    dpdb::hub::Store reopened(dir.file("hub.sqlite"));
    std::string order;
    for (const auto& line : reopened.logs({}, 100)) order += line["text"].get<std::string>();
    EXPECT_EQ(order, "abcd");
    order.clear();
    for (const auto& line : reopened.logs({8}, 100)) order += line["text"].get<std::string>();
    EXPECT_EQ(order, "ac");
    order.clear();
    for (const auto& line : reopened.logs({}, 2)) order += line["text"].get<std::string>();
    EXPECT_EQ(order, "cd");  // the latest, oldest first
}

TEST(Store, SessionIdsAreTakenBackOnceAfterReopening) {
    TempDir dir;
    {
        dpdb::hub::Store store(dir.file("hub.sqlite"));
        store.remember_session({"node17", 4242, 1}, 5);
        store.remember_session({"node17", 4242, 2}, 6);
        store.remember_session({"node18", 4242, 1}, 7);
        store.forget_session(6);  // closed
    }
    dpdb::hub::Store reopened(dir.file("hub.sqlite"));
    const auto ids = reopened.take_session_ids();
    ASSERT_EQ(ids.size(), 2u);
    EXPECT_EQ(ids.at({"node17", 4242, 1}), 5);
    EXPECT_EQ(ids.at({"node18", 4242, 1}), 7);
    // Taken: a session that does not come back before the next restart is forgotten.
    EXPECT_TRUE(reopened.take_session_ids().empty());
}

TEST(Store, UnwritablePathIsAClearError) {
    EXPECT_THROW(dpdb::hub::Store("/nonexistent-dir/hub.sqlite"), std::runtime_error);
}

}  // namespace
