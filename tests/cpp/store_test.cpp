#include "hub/store.hpp"

#include <gtest/gtest.h>
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

TEST(Store, UnwritablePathIsAClearError) {
    EXPECT_THROW(dpdb::hub::Store("/nonexistent-dir/hub.sqlite"), std::runtime_error);
}

}  // namespace
