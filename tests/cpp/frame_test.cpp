#include "wire/frame.hpp"

#include <gtest/gtest.h>

using dpdb::wire::encode_frame;
using dpdb::wire::FrameDecoder;
using dpdb::wire::kMaxFrameBytes;
using dpdb::wire::ProtocolError;

TEST(Frame, RoundTripsAcrossArbitrarySplits) {
    const std::string stream = encode_frame("hello") + encode_frame(std::string(70000, 'x'));
    for (std::size_t chunk : {1u, 3u, 4u, 5u, 4096u, 100000u}) {
        FrameDecoder decoder;
        std::vector<std::string> got;
        for (std::size_t i = 0; i < stream.size(); i += chunk) {
            decoder.feed(stream.data() + i, std::min(chunk, stream.size() - i));
            while (auto payload = decoder.next()) got.push_back(*payload);
        }
        ASSERT_EQ(got.size(), 2u) << "chunk " << chunk;
        EXPECT_EQ(got[0], "hello");
        EXPECT_EQ(got[1].size(), 70000u);
        EXPECT_EQ(decoder.buffered(), 0u);
    }
}

TEST(Frame, TruncatedInputWaitsForMore) {
    const std::string frame = encode_frame("payload");
    FrameDecoder decoder;
    decoder.feed(frame.data(), frame.size() - 1);
    EXPECT_FALSE(decoder.next().has_value());
    decoder.feed(frame.data() + frame.size() - 1, 1);
    EXPECT_EQ(decoder.next().value(), "payload");
}

TEST(Frame, RejectsOversizedAndEmptyFrames) {
    const char oversized[] = {0x00, 0x10, 0x00, 0x01};  // 1 MiB + 1
    FrameDecoder big;
    big.feed(oversized, 4);
    EXPECT_THROW(big.next(), ProtocolError);

    const char empty[] = {0, 0, 0, 0};
    FrameDecoder zero;
    zero.feed(empty, 4);
    EXPECT_THROW(zero.next(), ProtocolError);

    EXPECT_THROW(encode_frame(std::string(kMaxFrameBytes + 1, 'x')), ProtocolError);
    EXPECT_THROW(encode_frame(""), ProtocolError);
}
