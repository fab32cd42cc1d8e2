#include <gtest/gtest.h>

#include <string>
#include <variant>

#include "dap/framing.hpp"

using dpdb::dap::BadHeader;
using dpdb::dap::Body;
using dpdb::dap::encode_frame;
using dpdb::dap::FrameReader;
using dpdb::dap::Incomplete;

TEST(DapFraming, ReadsMessagesFedInPiecesOfAnySize) {
    const std::string stream = encode_frame({{"seq", 1}}) + encode_frame({{"seq", 2}});
    FrameReader reader;
    std::vector<std::string> bodies;
    for (const char c : stream) {
        reader.feed(&c, 1);
        for (auto frame = reader.next(); std::holds_alternative<Body>(frame);
             frame = reader.next()) {
            bodies.push_back(std::get<Body>(frame).json);
        }
    }
    ASSERT_EQ(bodies.size(), 2u);
    EXPECT_EQ(bodies[0], R"({"seq":1})");
    EXPECT_EQ(bodies[1], R"({"seq":2})");
}

TEST(DapFraming, OtherHeadersAndCaseAreAccepted) {
    FrameReader reader;
    const std::string data = "content-type: application/json\r\nCONTENT-LENGTH:  2 \r\n\r\n{}";
    reader.feed(data.data(), data.size());
    const auto frame = reader.next();
    ASSERT_TRUE(std::holds_alternative<Body>(frame));
    EXPECT_EQ(std::get<Body>(frame).json, "{}");
}

TEST(DapFraming, ABadHeaderIsSkippedAndTheNextMessageRead) {
    FrameReader reader;
    const std::string data =
        "Content-Length: -4\r\n\r\nnonsense\r\n\r\n" + encode_frame({{"a", 1}});
    reader.feed(data.data(), data.size());
    EXPECT_TRUE(std::holds_alternative<BadHeader>(reader.next()));
    // "nonsense" is taken for a header without a colon, skipped too.
    EXPECT_TRUE(std::holds_alternative<BadHeader>(reader.next()));
    const auto frame = reader.next();
    ASSERT_TRUE(std::holds_alternative<Body>(frame));
    EXPECT_EQ(std::get<Body>(frame).json, R"({"a":1})");
}

TEST(DapFraming, HugeAnnouncementsAndEndlessHeadersBreakTheStream) {
    FrameReader huge;
    const std::string data = "Content-Length: 999999999\r\n\r\n";
    huge.feed(data.data(), data.size());
    EXPECT_TRUE(std::holds_alternative<Incomplete>(huge.next()));
    EXPECT_NE(huge.broken().find("16 MiB"), std::string::npos);

    FrameReader endless;
    const std::string header(FrameReader::kMaxHeader + 1, 'x');
    endless.feed(header.data(), header.size());
    EXPECT_TRUE(std::holds_alternative<Incomplete>(endless.next()));
    EXPECT_FALSE(endless.broken().empty());
}

TEST(DapFraming, EncodingReplacesInvalidUtf8) {
    const auto frame = encode_frame({{"output", std::string("a\xff")}});
    EXPECT_NE(frame.find("Content-Length: "), std::string::npos);
    EXPECT_NE(frame.find("a\xef\xbf\xbd"), std::string::npos);
}
