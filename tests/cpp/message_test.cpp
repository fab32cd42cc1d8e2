#include "wire/message.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using dpdb::wire::decode;
using dpdb::wire::encode;
using dpdb::wire::Json;
using dpdb::wire::kMaxFrameBytes;
using dpdb::wire::make;
using dpdb::wire::Message;
using dpdb::wire::ProtocolError;

namespace {

// The ProtocolError's text for a payload that decode() must reject ("" if it was accepted).
std::string rejection(const std::string& payload) {
    try {
        decode(payload);
    } catch (const ProtocolError& error) {
        return error.what();
    }
    return "";
}

std::string nested_event(int depth) {
    std::string data;
    for (int i = 0; i < depth; ++i) data += "{\"a\":";
    data += "1";
    data += std::string(depth, '}');
    return R"({"t":"event","kind":"k","data":)" + data + "}";
}

}  // namespace

TEST(Message, DecodesAValidMessage) {
    const Message m = decode(R"({"t":"input","sid":3,"line":"next"})");
    EXPECT_EQ(m.type, "input");
    EXPECT_EQ(m.num("sid"), 3);
    EXPECT_EQ(m.str("line"), "next");
    EXPECT_TRUE(m.has("line"));
    EXPECT_FALSE(m.has("text"));
}

TEST(Message, OptionalFieldMayBeAbsentOrPresent) {
    const std::string base = R"({"t":"hello","v":1,"role":"agent","nonce":"n","mac":"m")";
    EXPECT_FALSE(decode(base + "}").has("proc"));
    EXPECT_EQ(decode(base + R"(,"proc":{"pid":4}})")["proc"]["pid"], 4);
    EXPECT_NE(rejection(base + R"(,"proc":[4]})"), "");
}

TEST(Message, RejectsUnknownType) {
    EXPECT_NE(rejection(R"({"t":"nonsense"})").find("unknown message type"), std::string::npos);
    EXPECT_NE(rejection(R"({"t":""})"), "");
}

TEST(Message, RejectsMissingOrNonStringType) {
    EXPECT_NE(rejection(R"({"sid":1})").find("\"t\""), std::string::npos);
    EXPECT_NE(rejection(R"({"t":5})").find("\"t\""), std::string::npos);
    EXPECT_NE(rejection(R"({"t":null})"), "");
}

TEST(Message, RejectsMissingField) {
    EXPECT_NE(rejection(R"({"t":"input","sid":1})").find("lacks field \"line\""),
              std::string::npos);
    EXPECT_NE(rejection(R"({"t":"welcome","mac":"x"})").find("\"hub\""), std::string::npos);
}

TEST(Message, RejectsWrongFieldType) {
    EXPECT_NE(rejection(R"({"t":"input","sid":"1","line":"c"})").find("wrong type"),
              std::string::npos);
    EXPECT_NE(rejection(R"({"t":"input","sid":1.0,"line":"c"})"), "");  // float is not an int
    EXPECT_NE(rejection(R"({"t":"input","sid":true,"line":"c"})"), "");
    EXPECT_NE(rejection(R"({"t":"input","sid":null,"line":"c"})"), "");
    EXPECT_NE(rejection(R"({"t":"input","sid":1,"line":["c"]})"), "");
    EXPECT_NE(rejection(R"({"t":"listing","id":1,"processes":{},"sessions":[]})"), "");
    EXPECT_NE(rejection(R"({"t":"event","kind":"k","data":[]})"), "");
}

TEST(Message, RejectsUnexpectedExtraField) {
    EXPECT_NE(rejection(R"({"t":"detach","sid":1,"cols":80})").find("unexpected field \"cols\""),
              std::string::npos);
    EXPECT_NE(rejection(R"({"t":"subscribe","x":null})"), "");
    EXPECT_EQ(decode(R"({"t":"subscribe"})").type, "subscribe");
}

TEST(Message, RejectsOverLongStrings) {
    const std::size_t short_limit = 64 * 1024;
    const auto with_nonce = [](std::size_t n) {
        return R"({"t":"challenge","v":1,"nonce":")" + std::string(n, 'a') + "\"}";
    };
    EXPECT_EQ(rejection(with_nonce(short_limit)), "");
    EXPECT_NE(rejection(with_nonce(short_limit + 1)).find("too long"), std::string::npos);

    // Console text may be as long as a frame, but no longer.
    const auto with_text = [](std::size_t n) {
        return R"({"t":"output","sid":1,"text":")" + std::string(n, 'x') + "\"}";
    };
    EXPECT_EQ(rejection(with_text(short_limit + 1)), "");
    EXPECT_EQ(rejection(with_text(kMaxFrameBytes)), "");
    EXPECT_NE(rejection(with_text(kMaxFrameBytes + 1)).find("too long"), std::string::npos);

    // The limit counts bytes, not characters.
    std::string wide;
    for (std::size_t i = 0; i < short_limit / 2 + 1; ++i) wide += "\xc3\xa9";  // é
    EXPECT_NE(rejection(R"({"t":"input","sid":1,"line":")" + wide + "\"}"), "");
}

TEST(Message, RejectsNestingDeeperThanTheLimit) {
    // A stacks reply inside a listing inside a result nests about ten deep.
    EXPECT_EQ(rejection(nested_event(12)), "");
    EXPECT_NE(rejection(nested_event(17)).find("nests deeper"), std::string::npos);
    EXPECT_NE(rejection(nested_event(100000)).find("nests deeper"), std::string::npos);
    const std::string arrays =
        R"({"t":"completions","sid":1,"id":1,"matches":)" + std::string(50000, '[') + "]}";
    EXPECT_NE(rejection(arrays), "");
}

TEST(Message, RejectsInvalidJson) {
    const std::vector<std::string> payloads = {
        "",
        "{",
        R"({"t":"list","id":)",
        R"({"t":"list","id":1,})",
        R"({'t':'list','id':1})",
        R"({t:"list",id:1})",
        R"({"t":"list","id":1}garbage)",
        R"({"t":"list","id":1} {"t":"list","id":2})",
        R"({"t":"list","id":01})",
        R"({"t":"list","id":NaN})",
        R"({"t":"list",/* comment */"id":1})",
        std::string("\0", 1),
        std::string(R"({"t":"list","id":1})") + '\0',
    };
    for (const auto& payload : payloads) EXPECT_NE(rejection(payload), "") << payload;
    EXPECT_NE(rejection(R"({"t":"list","id":)").find("not valid JSON"), std::string::npos);
}

TEST(Message, RejectsNulBytesWhereverTheyAre) {
    // The JSON parser stops at a NUL byte: whatever followed it must not be silently ignored.
    using namespace std::string_literals;
    EXPECT_NE(rejection(R"({"t":"list","id":1})"s + '\0' + R"({"t":"attach"})"), "");
    EXPECT_NE(rejection(R"({"t":"list","id":1})"s + '\0' + "\xff\xff"), "");
    EXPECT_NE(rejection("{\"t\":\"input\",\"sid\":1,\"line\":\"a\0b\"}"s), "");
    // Escaped, a NUL is just a character.
    EXPECT_EQ(decode(R"({"t":"input","sid":1,"line":"a\u0000b"})").str("line"), "a\0b"s);
}

TEST(Message, RejectsInvalidUtf8) {
    EXPECT_NE(rejection("{\"t\":\"output\",\"sid\":1,\"text\":\"\xc3\x28\"}"), "");
    EXPECT_NE(rejection("{\"t\":\"output\",\"sid\":1,\"text\":\"\xff\"}"), "");
    EXPECT_NE(rejection("{\"t\":\"output\",\"sid\":1,\"text\":\"\xed\xa0\x80\"}"),
              "");                                                                   // surrogate
    EXPECT_NE(rejection("{\"t\":\"output\",\"sid\":1,\"text\":\"\xc0\xaf\"}"), "");  // overlong
    EXPECT_NE(rejection(R"({"t":"output","sid":1,"text":"\ud800"})"), "");  // lone surrogate
    EXPECT_EQ(decode(R"({"t":"output","sid":1,"text":"\ud83d\ude00 \u00e9"})").str("text"),
              "\xf0\x9f\x98\x80 \xc3\xa9");
}

TEST(Message, RejectsNonObjects) {
    for (const char* payload : {"[]", R"(["t","list"])", "\"list\"", "42", "null", "true"}) {
        EXPECT_NE(rejection(payload).find("not a JSON object"), std::string::npos) << payload;
    }
}

TEST(Message, MakeRoundTripsThroughEncodeAndDecode) {
    const Message made = make("complete", {{"sid", 2},
                                           {"id", 7},
                                           {"text", "pri"},
                                           {"line", "x = pri"},
                                           {"begidx", 4},
                                           {"endidx", 7}});
    EXPECT_EQ(made.type, "complete");
    EXPECT_EQ(made.body.at("t"), "complete");
    const Message back = decode(encode(made));
    EXPECT_EQ(back.type, made.type);
    EXPECT_EQ(back.body, made.body);

    const Message empty = make("subscribe");
    EXPECT_EQ(decode(encode(empty)).type, "subscribe");

    const Message nested =
        make("event", {{"kind", "session_open"}, {"data", {{"argv", {"python", "-c", "1"}}}}});
    EXPECT_EQ(decode(encode(nested)).body, nested.body);

    // frame() is the length prefix followed by the encoding.
    const std::string framed = dpdb::wire::frame(made);
    EXPECT_EQ(framed.substr(4), encode(made));
}

TEST(Message, MakeChecksLikeDecode) {
    EXPECT_THROW(make("nonsense"), ProtocolError);
    EXPECT_THROW(make("input", {{"sid", 1}}), ProtocolError);
    EXPECT_THROW(make("input", {{"sid", "1"}, {"line", "c"}}), ProtocolError);
    EXPECT_THROW(make("input", {{"sid", 1}, {"line", "c"}, {"extra", 0}}), ProtocolError);
    EXPECT_THROW(make("refused", {{"reason", std::string(64 * 1024 + 1, 'r')}}), ProtocolError);
}

TEST(Message, EncodeReplacesInvalidUtf8InsteadOfThrowing) {
    // Program output may hold any bytes; make() does not look inside strings' encoding.
    const Message m = make("output", {{"sid", 1}, {"text", std::string("ok \xff\xc3(", 6) + "!"}});
    std::string encoded;
    ASSERT_NO_THROW(encoded = encode(m));
    const Message back = decode(encoded);  // what goes on the wire is valid UTF-8
    EXPECT_EQ(back.str("text"), "ok \xef\xbf\xbd\xef\xbf\xbd(!");  // U+FFFD for each bad byte
}

TEST(Message, PagesAndSummariesAreCheckedLikeEverythingElse) {
    // A page of a listing or a result says "more" (a boolean) until the last, which does not.
    EXPECT_EQ(rejection(R"({"t":"listing","id":1,"processes":[],"sessions":[],"more":true})"), "");
    EXPECT_NE(rejection(R"({"t":"listing","id":1,"processes":[],"sessions":[],"more":1})"), "");
    EXPECT_EQ(rejection(R"({"t":"result","id":1,"ok":true,"message":"","more":true})"), "");
    EXPECT_NE(rejection(R"({"t":"result","id":1,"ok":true,"message":"","more":"yes"})"), "");
    EXPECT_EQ(rejection(R"({"t":"list","id":1,"sessions_only":true})"), "");
    EXPECT_NE(rejection(R"({"t":"list","id":1,"sessions_only":"yes"})"), "");
    EXPECT_NE(rejection(R"({"t":"list","id":1,"offset":10})"), "");
    EXPECT_EQ(rejection(R"({"t":"summarize","id":1})"), "");
    EXPECT_NE(rejection(R"({"t":"summarize"})"), "");
    const std::string summary =
        R"({"t":"summary","id":1,"processes":3,"sessions":1,"attached":0,"hosts":1,)"
        R"("group_count":1,"groups":[{"host":"h"}],"places":[],"paused":[])";
    EXPECT_EQ(rejection(summary + "}"), "");
    EXPECT_NE(rejection(summary + R"(,"more":true})"), "");  // a summary is never paged
    EXPECT_NE(rejection(R"({"t":"summary","id":1,"processes":3})").find("lacks field"),
              std::string::npos);
}

TEST(Message, InspectQuestionsAndAnswersCarryObjectsOnly) {
    const Message question =
        decode(R"({"t":"inspect","sid":2,"id":7,"request":{"command":"stack"}})");
    EXPECT_EQ(question["request"]["command"], "stack");
    const Message answer = decode(R"({"t":"inspect_reply","sid":2,"id":7,"body":{"frames":[]}})");
    EXPECT_TRUE(answer["body"]["frames"].is_array());
    EXPECT_NE(rejection(R"({"t":"inspect","sid":2,"id":7,"request":"stack"})"), "");
    EXPECT_NE(rejection(R"({"t":"inspect","sid":2,"request":{}})"), "");
    EXPECT_NE(rejection(R"({"t":"inspect_reply","sid":2,"id":7,"body":{},"more":true})"), "");
}
