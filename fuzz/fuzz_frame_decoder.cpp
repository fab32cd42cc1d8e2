// libFuzzer target: an arbitrary byte stream, fed to FrameDecoder in arbitrary chunks, each
// complete payload decoded as a message. ProtocolError is the only acceptable failure; any other
// exception, a sanitizer report or a broken invariant is a crash.
//
// Input layout (FuzzedDataProvider): the stream is taken from the front, the chunk sizes from the
// back, so a seed file is simply some frames followed by a few bytes that choose the chunking.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "invariant.hpp"
#include "wire/frame.hpp"
#include "wire/message.hpp"

namespace {

using dpdb::fuzz::fail;

void check_message(const std::string& payload) {
    dpdb::wire::Message message;
    try {
        message = dpdb::wire::decode(payload);
    } catch (const dpdb::wire::ProtocolError&) {
        return;
    }
    // Whatever decode accepts must survive a trip back through the wire unchanged in meaning.
    const std::string encoded = dpdb::wire::encode(message);
    const auto again = dpdb::wire::decode(dpdb::wire::frame(message).substr(4));
    if (again.type != message.type) fail("type changed across encode/decode");
    if (dpdb::wire::encode(again) != encoded) fail("encode(decode(encode(m))) != encode(m)");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    FuzzedDataProvider provider(data, size);
    dpdb::wire::FrameDecoder decoder;
    std::string fed;            // every byte given to the decoder so far
    std::size_t delivered = 0;  // bytes of `fed` accounted for by returned frames
    while (provider.remaining_bytes() > 0) {
        const auto chunk_size = provider.ConsumeIntegralInRange<std::size_t>(1, 300);
        const std::string chunk = provider.ConsumeBytesAsString(chunk_size);
        if (chunk.empty()) break;
        decoder.feed(chunk.data(), chunk.size());
        fed += chunk;
        try {
            while (auto payload = decoder.next()) {
                // The payload must be exactly the bytes that followed its length prefix.
                const std::string frame = dpdb::wire::encode_frame(*payload);
                if (fed.compare(delivered, frame.size(), frame) != 0) {
                    fail("payload does not match the bytes fed");
                }
                delivered += frame.size();
                check_message(*payload);
            }
        } catch (const dpdb::wire::ProtocolError&) {
            return 0;  // the decoder is unusable after this, as documented
        }
        if (decoder.buffered() != fed.size() - delivered) fail("buffered() miscounts");
    }
    return 0;
}
