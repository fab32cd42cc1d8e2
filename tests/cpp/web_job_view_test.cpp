#include <gtest/gtest.h>

#include "web/job_view.hpp"

namespace dpdb::web {
namespace {

using wire::Json;

wire::Message event(const char* kind, Json data) {
    return wire::make("event", {{"kind", kind}, {"data", std::move(data)}});
}

TEST(WebJobView, TheListingsLastPageIsTheSnapshot) {
    JobView view(7);
    auto first = wire::make("listing", {{"id", 7},
                                        {"processes", Json::array({{{"pid", 10}}})},
                                        {"sessions", Json::array()},
                                        {"more", true}});
    EXPECT_FALSE(view.apply(first));
    auto other = wire::make(
        "listing",
        {{"id", 8}, {"processes", Json::array({{{"pid", 99}}})}, {"sessions", Json::array()}});
    EXPECT_FALSE(view.apply(other));  // another question's answer
    auto last = wire::make("listing", {{"id", 7},
                                       {"processes", Json::array({{{"pid", 11}}})},
                                       {"sessions", Json::array({{{"sid", 3}, {"pid", 11}}})},
                                       {"exited", Json::array({{{"pid", 5}, {"status", 0}}})}});
    const auto told = view.apply(last);
    ASSERT_TRUE(told);
    EXPECT_EQ((*told)["t"], "snapshot");
    EXPECT_EQ((*told)["processes"].size(), 2u);
    EXPECT_EQ((*told)["sessions"][0]["sid"], 3);
    EXPECT_EQ((*told)["exited"][0]["pid"], 5);
}

TEST(WebJobView, EventsAreKeptAndPassedOn) {
    JobView view(1);
    EXPECT_EQ((*view.apply(event("process_start", {{"pid", 4}, {"argv", {"a"}}})))["kind"],
              "process_start");
    view.apply(event("session_open", {{"sid", 2}, {"pid", 4}, {"line", 9}}));
    EXPECT_EQ(view.snapshot()["sessions"].size(), 1u);
    view.apply(event("session_close", {{"sid", 2}, {"reason", "continued"}}));
    EXPECT_TRUE(view.snapshot()["sessions"].empty());
    view.apply(event("process_crash", {{"pid", 4}, {"signal", "SIGSEGV"}}));
    view.apply(event("process_exit", {{"pid", 4}, {"reason", "closed"}, {"signal", "SIGSEGV"}}));
    const auto snapshot = view.snapshot();
    EXPECT_TRUE(snapshot["processes"].empty());
    ASSERT_EQ(snapshot["exited"].size(), 1u);
    // What the process said of itself is kept with how it ended.
    EXPECT_EQ(snapshot["exited"][0]["argv"], Json({"a"}));
    EXPECT_EQ(snapshot["exited"][0]["signal"], "SIGSEGV");
    EXPECT_FALSE(view.apply(event("no_such_kind", Json::object())));
    EXPECT_FALSE(view.apply(wire::make("output", {{"sid", 1}, {"text", "x"}})));
}

}  // namespace
}  // namespace dpdb::web
