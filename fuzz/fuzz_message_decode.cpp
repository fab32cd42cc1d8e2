// libFuzzer target: wire::decode on an arbitrary payload. ProtocolError is the only acceptable
// failure; any other exception, a sanitizer report or a broken invariant is a crash.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "invariant.hpp"
#include "wire/message.hpp"

namespace {

using dpdb::wire::Json;

using dpdb::fuzz::fail;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view payload(reinterpret_cast<const char*>(data), size);
    dpdb::wire::Message message;
    try {
        message = dpdb::wire::decode(payload);
    } catch (const dpdb::wire::ProtocolError&) {
        return 0;
    }
    if (!message.body.is_object() || message.body.at("t") != message.type) {
        fail("decoded message lacks its type");
    }
    // The parser stops at a NUL byte; an accepted payload must have been read to its end.
    if (payload.find('\0') != std::string_view::npos) fail("accepted a payload holding a NUL");
    // The depth-guarded parse agrees with a plain one.
    if (Json::parse(payload, nullptr, /*allow_exceptions=*/false) != message.body) {
        fail("the guarded parse differs from a plain one");
    }
    // What decode accepts, make() accepts too, and it survives encode/decode.
    Json fields = message.body;
    fields.erase("t");
    const auto rebuilt = dpdb::wire::make(message.type, std::move(fields));
    const std::string encoded = dpdb::wire::encode(rebuilt);
    if (encoded != dpdb::wire::encode(message)) fail("make() changed the message");
    const auto again = dpdb::wire::decode(encoded);
    if (again.type != message.type) fail("type changed across encode/decode");
    if (dpdb::wire::encode(again) != encoded) fail("encode(decode(encode(m))) != encode(m)");
    return 0;
}
