// Length-prefixed frames: a 4-byte big-endian length, then that many bytes of payload.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace dpdb::wire {

// Large enough for a screenful of pdb output or a listing of thousands of processes; small enough
// that a hostile peer cannot make anyone allocate much.
inline constexpr std::uint32_t kMaxFrameBytes = 1u << 20;

class ProtocolError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

std::string encode_frame(std::string_view payload);

// Incremental decoder: feed it whatever the socket gave, take out complete payloads.
class FrameDecoder {
  public:
    void feed(const char* data, std::size_t size);
    // The next complete payload, or nothing if more bytes are needed. Throws ProtocolError on a
    // length of zero or above kMaxFrameBytes; the decoder is then unusable.
    std::optional<std::string> next();
    std::size_t buffered() const { return buffer_.size() - consumed_; }

  private:
    std::string buffer_;
    std::size_t consumed_ = 0;
};

}  // namespace dpdb::wire
