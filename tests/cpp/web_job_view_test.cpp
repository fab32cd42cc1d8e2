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

TEST(WebJobView, TheTimelinesEventsAreStampedAndKeptForLaterPages) {
    JobView view(1);
    view.apply(event("process_start", {{"pid", 4}, {"host", "h"}}));
    const auto stop = view.apply(event("session_open", {{"sid", 2}, {"pid", 4}, {"line", 9}}));
    ASSERT_TRUE(stop);
    EXPECT_TRUE((*stop)["data"]["at"].is_number());  // when dpdb web heard of it
    view.apply(event("session_update", {{"sid", 2}, {"pid", 4}, {"attached", true}}));
    // The hub names the pid only: the page is told the host, the lane it ended in.
    const auto end = view.apply(event("process_exit", {{"pid", 4}, {"status", 0}}));
    EXPECT_EQ((*end)["data"]["host"], "h");
    const auto moments = view.snapshot()["moments"];
    ASSERT_EQ(moments.size(), 3u);  // not the update
    EXPECT_EQ(moments[0]["kind"], "process_start");
    EXPECT_EQ(moments[1]["kind"], "session_open");
    EXPECT_EQ(moments[2]["kind"], "process_exit");
    EXPECT_EQ(moments[2]["data"]["status"], 0);
    EXPECT_LE(moments[0]["data"]["at"].get<double>(), moments[2]["data"]["at"].get<double>());
    // A log message carries its own time; the breakpoints' change is passed on as it is.
    EXPECT_FALSE((*view.apply(event("log", {{"pid", 4}, {"time", 1.5}})))["data"].contains("at"));
    EXPECT_EQ((*view.apply(event("breakpoints", Json::object())))["kind"], "breakpoints");
    EXPECT_EQ(view.snapshot()["moments"].size(), 3u);
}

TEST(WebJobView, TheTimelinesEventsAreBounded) {
    JobView view(1);
    for (int pid = 1; pid <= 10001; ++pid) view.apply(event("process_start", {{"pid", pid}}));
    const auto moments = view.snapshot()["moments"];
    ASSERT_EQ(moments.size(), 10000u);
    EXPECT_EQ(moments[0]["data"]["pid"], 2);  // the oldest left first
}

}  // namespace
}  // namespace dpdb::web
