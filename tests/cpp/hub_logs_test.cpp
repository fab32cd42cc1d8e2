#include <gtest/gtest.h>

#include <string>

#include "hub/logs.hpp"

namespace {

using nlohmann::json;

const json kProcess = {{"pid", 42},  {"host", "node1"},    {"tags", {{"RANK", "3"}}},
                       {"run", "9"}, {"process_name", ""}, {"argv", {"python", "x.py"}}};

TEST(HubLogs, LinesAreStampedWithTheHubsRecordOfTheSender) {
    const auto stamped = dpdb::hub::stamp_log_lines(json::array({{{"time", 1.5},
                                                                  {"text", "hello"},
                                                                  {"thread", "T"},
                                                                  {"tid", 7},
                                                                  {"bp", 2},
                                                                  {"pid", 1}}}),
                                                    kProcess);
    ASSERT_EQ(stamped.size(), 1u);
    EXPECT_EQ(stamped[0]["pid"], 42);  // not the 1 the line claimed
    EXPECT_EQ(stamped[0]["host"], "node1");
    EXPECT_EQ(stamped[0]["tags"]["RANK"], "3");
    EXPECT_EQ(stamped[0]["thread"], "T");
    EXPECT_EQ(stamped[0]["tid"], 7);
    EXPECT_EQ(stamped[0]["bp"], 2);
    EXPECT_FALSE(stamped[0].contains("process_name"));
}

TEST(HubLogs, MalformedLinesCostOnlyThemselves) {
    const auto stamped = dpdb::hub::stamp_log_lines(
        json::array({1,
                     "text",
                     {{"time", "now"}, {"text", "a"}},
                     {{"time", 1}},
                     {{"time", 2}, {"text", "kept"}, {"tid", "x"}, {"thread", 3}}}),
        kProcess);
    ASSERT_EQ(stamped.size(), 1u);
    EXPECT_EQ(stamped[0]["text"], "kept");
    EXPECT_FALSE(stamped[0].contains("tid"));
    EXPECT_EQ(stamped[0]["thread"], "?");
}

TEST(HubLogs, LongTextIsCutOnACharacterBoundary) {
    std::string text(4095, 'a');
    text += "\xc3\xa9\xc3\xa9";  // crosses the bound inside a two-byte character
    const auto stamped =
        dpdb::hub::stamp_log_lines(json::array({{{"time", 1}, {"text", text}}}), kProcess);
    const auto cut = stamped[0]["text"].get<std::string>();
    EXPECT_EQ(cut, std::string(4095, 'a') + "…");
}

TEST(HubLogs, AnEndWithMessagesNotSentIsALineOfTheProcesssLog) {
    const auto line = dpdb::hub::unsent_at_end_line(120, 2.5, kProcess);
    EXPECT_EQ(line["text"], "ended with 120 logpoint messages not sent");
    EXPECT_EQ(line["unsent"], 120);
    EXPECT_EQ(line["pid"], 42);
    EXPECT_EQ(line["host"], "node1");
    EXPECT_EQ(line["thread"], "dpdb");
    EXPECT_EQ(line["time"], 2.5);
    EXPECT_EQ(dpdb::hub::unsent_at_end_line(1, 2.5, kProcess)["text"],
              "ended with 1 logpoint message not sent");
}

}  // namespace
