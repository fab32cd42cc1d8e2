// Pages (hub/pages.hpp): an answer larger than a frame split into slices that each fit, and
// that together give back the whole.
#include "hub/pages.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace {

using dpdb::hub::encode_item;
using dpdb::hub::encode_pages;
using dpdb::hub::encoded_size;
using dpdb::hub::EncodedArrays;
using dpdb::hub::Pages;
using dpdb::hub::paginate;
using dpdb::hub::shrink_description;
using dpdb::hub::shrink_stacks;
using dpdb::wire::Json;
using dpdb::wire::kMaxFrameBytes;
using dpdb::wire::make;

Json processes(int count, std::size_t argv_bytes) {
    Json out = Json::array();
    for (int i = 0; i < count; ++i) {
        out.push_back({{"pid", 1000 + i},
                       {"host", "h"},
                       {"argv", {std::string(argv_bytes, 'a')}},
                       {"sessions", Json::array()}});
    }
    return out;
}

// Each page as the hub sends it: a listing message of its own, which must fit in a frame.
std::vector<std::string> frames(std::vector<Json> pages) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < pages.size(); ++i) {
        pages[i]["id"] = 7;
        if (i + 1 < pages.size()) pages[i]["more"] = true;
        out.push_back(dpdb::wire::frame(make("listing", std::move(pages[i]))));
    }
    return out;
}

TEST(Pages, ASmallAnswerIsOnePageWithEveryArray) {
    const auto pages = paginate({{"processes", processes(3, 10)}, {"sessions", Json::array()}},
                                shrink_description);
    ASSERT_EQ(pages.size(), 1u);
    EXPECT_EQ(pages[0]["processes"].size(), 3u);
    EXPECT_TRUE(pages[0]["sessions"].is_array());
    EXPECT_TRUE(pages[0]["sessions"].empty());
}

TEST(Pages, NothingAtAllIsStillOnePage) {
    const auto pages = paginate({{"processes", Json::array()}}, shrink_description);
    ASSERT_EQ(pages.size(), 1u);
    EXPECT_TRUE(pages[0]["processes"].empty());
}

TEST(Pages, ALargeAnswerIsSplitInOrderAndEveryPageFitsAFrame) {
    // 10,000 processes of about 200 bytes: about 2 MB, twice the frame limit.
    const Json all = processes(10000, 150);
    Json sessions = Json::array();
    for (int i = 0; i < 500; ++i) sessions.push_back({{"sid", i + 1}, {"pid", 1000 + i}});
    const auto pages =
        paginate({{"processes", all}, {"sessions", sessions}, {"exited", Json::array()}},
                 shrink_description);
    ASSERT_GT(pages.size(), 2u);
    Json processes_back = Json::array();
    Json sessions_back = Json::array();
    for (const auto& page : pages) {
        // Items fill a page up to its size; the names of the arrays come on top.
        EXPECT_LE(encoded_size(page), dpdb::hub::kPageBytes + 64);
        for (const auto& p : page["processes"]) processes_back.push_back(p);
        for (const auto& s : page["sessions"]) sessions_back.push_back(s);
        EXPECT_TRUE(page["exited"].is_array());
    }
    EXPECT_EQ(processes_back, all);
    EXPECT_EQ(sessions_back, sessions);
    for (const auto& frame : frames(pages)) EXPECT_LE(frame.size(), kMaxFrameBytes + 4);
}

TEST(Pages, AnItemLargerThanAPageHasAPageOfItsOwn) {
    Pages limits;
    limits.page_bytes = 1000;
    const auto pages = paginate({{"processes", processes(3, 3000)}}, shrink_description, limits);
    ASSERT_EQ(pages.size(), 3u);
    for (const auto& page : pages) EXPECT_EQ(page["processes"].size(), 1u);
}

TEST(Pages, AnItemLargerThanAFrameIsShrunkAndSaysSo) {
    // A process whose argv alone is nearly a frame, and a session that carries it too: together
    // with anything else they would not fit.
    Json huge = processes(1, kMaxFrameBytes - 100)[0];
    huge["tags"] = {{"role", std::string(2000, 'r')}};
    const auto pages = paginate(
        {{"processes", Json::array({huge, processes(1, 10)[0]})}, {"sessions", Json::array()}},
        shrink_description);
    Json back = Json::array();
    for (const auto& page : pages) {
        for (const auto& p : page["processes"]) back.push_back(p);
    }
    ASSERT_EQ(back.size(), 2u);
    EXPECT_EQ(back[0]["pid"], 1000);
    EXPECT_EQ(back[0]["host"], "h");
    EXPECT_TRUE(back[0]["truncated"].get<bool>());
    EXPECT_FALSE(back[0].contains("argv"));
    EXPECT_FALSE(back[1].contains("truncated"));
    for (const auto& frame : frames(pages)) EXPECT_LE(frame.size(), kMaxFrameBytes + 4);
}

TEST(Pages, ShrunkStringsAreCutAndWhatCannotShrinkIsReplaced) {
    const Json shrunk = shrink_description({{"pid", 1}, {"file", std::string(5000, 'f')}});
    EXPECT_EQ(shrunk["file"].get<std::string>().size(), 1024u);
    EXPECT_EQ(shrink_description(Json::array({1, 2})), Json({{"truncated", true}}));
    Pages limits;
    limits.item_bytes = 100;
    // A shrink that does not help: the item is replaced by a marker rather than sent whole.
    const auto pages = paginate(
        {{"processes", Json::array({{{"x", std::string(500, 'x')}}})}},
        [](const Json& item) { return item; }, limits);
    EXPECT_EQ(pages[0]["processes"][0], Json({{"truncated", true}}));
}

TEST(Pages, StacksTooLargeKeepTheirStartAndSayHowMuchWasCut) {
    const Json item = {{"pid", 5},
                       {"stacks", {{"text", std::string(kMaxFrameBytes, 's')}, {"threads", {}}}}};
    const Json shrunk = shrink_stacks(item);
    EXPECT_EQ(shrunk["pid"], 5);
    const auto text = shrunk["stacks"]["text"].get<std::string>();
    EXPECT_LT(text.size(), dpdb::hub::kMaxItemBytes);
    EXPECT_NE(text.find("more bytes cut"), std::string::npos);
    EXPECT_EQ(shrink_stacks({{"pid", 6}, {"error", "no answer"}})["error"], "no answer");
}

TEST(Pages, EncodedPagesDecodeAsMessagesAndGiveBackEveryItem) {
    const Json all = processes(3000, 200);
    EncodedArrays arrays = {{"processes", {}}, {"sessions", {}}, {"exited", {}}};
    for (const auto& p : all) arrays[0].second.push_back(encode_item(p, shrink_description));
    for (int i = 0; i < 50; ++i) arrays[1].second.push_back(Json({{"sid", i}}).dump());
    const auto pages = encode_pages("\"t\":\"listing\",\"id\":9", arrays);
    ASSERT_GT(pages.size(), 2u);
    Json processes_back = Json::array();
    Json sessions_back = Json::array();
    for (std::size_t i = 0; i < pages.size(); ++i) {
        EXPECT_LE(pages[i].size(), dpdb::hub::kPageBytes + 128);
        const auto page = dpdb::wire::decode(pages[i]);  // strict, as a client decodes it
        EXPECT_EQ(page.type, "listing");
        EXPECT_EQ(page.num("id"), 9);
        EXPECT_EQ(page.has("more"), i + 1 < pages.size());
        EXPECT_TRUE(page["exited"].empty());
        for (const auto& p : page["processes"]) processes_back.push_back(p);
        for (const auto& s : page["sessions"]) sessions_back.push_back(s);
    }
    EXPECT_EQ(processes_back, all);
    ASSERT_EQ(sessions_back.size(), 50u);
    EXPECT_EQ(sessions_back[49]["sid"], 49);
    // Nothing at all: one page with every array, empty.
    const auto empty =
        encode_pages("\"t\":\"listing\",\"id\":1", {{"processes", {}}, {"sessions", {}}});
    ASSERT_EQ(empty.size(), 1u);
    EXPECT_EQ(dpdb::wire::decode(empty[0])["processes"], Json::array());
}

TEST(Pages, AnEncodedItemLargerThanAFrameIsShrunk) {
    const Json huge = processes(1, kMaxFrameBytes)[0];
    const auto text = encode_item(huge, shrink_description);
    EXPECT_LT(text.size(), dpdb::hub::kMaxItemBytes);
    EXPECT_TRUE(Json::parse(text)["truncated"].get<bool>());
    EXPECT_EQ(encode_item({{"pid", 1}}, shrink_description), R"({"pid":1})");
}

}  // namespace
