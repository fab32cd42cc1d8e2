// The Debug Adapter Protocol's base protocol: each message is a header block ("Content-Length: N"
// and CRLF, then an empty line) followed by N bytes of JSON.
#pragma once

#include <cstddef>
#include <string>
#include <variant>

#include "wire/message.hpp"

namespace dpdb::dap {

// What the reader found: a message's body, a header it could not read (skipped, so the next
// message is read again), or nothing complete yet.
struct Body {
    std::string json;
};
struct BadHeader {
    std::string reason;
};
struct Incomplete {};
using Frame = std::variant<Body, BadHeader, Incomplete>;

class FrameReader {
  public:
    // A header block bigger than this, or a body announced bigger than kMaxBody, cannot be a
    // message of an IDE's: the connection is given up (FrameReader::broken).
    static constexpr std::size_t kMaxHeader = 8 * 1024;
    static constexpr std::size_t kMaxBody = 16 * 1024 * 1024;

    void feed(const char* data, std::size_t size) { buffer_.append(data, size); }
    Frame next();
    // Why the stream cannot be read on, or empty.
    const std::string& broken() const { return broken_; }

  private:
    std::string buffer_;
    std::string broken_;
};

std::string encode_frame(const wire::Json& message);

}  // namespace dpdb::dap
