#include "wire/frame.hpp"

namespace dpdb::wire {

std::string encode_frame(std::string_view payload) {
    if (payload.empty() || payload.size() > kMaxFrameBytes) {
        throw ProtocolError("frame payload of " + std::to_string(payload.size()) +
                            " bytes is outside 1.." + std::to_string(kMaxFrameBytes));
    }
    const auto size = static_cast<std::uint32_t>(payload.size());
    std::string out;
    out.reserve(4 + payload.size());
    out.push_back(static_cast<char>((size >> 24) & 0xff));
    out.push_back(static_cast<char>((size >> 16) & 0xff));
    out.push_back(static_cast<char>((size >> 8) & 0xff));
    out.push_back(static_cast<char>(size & 0xff));
    out.append(payload);
    return out;
}

void FrameDecoder::feed(const char* data, std::size_t size) {
    if (consumed_ > 0 && consumed_ == buffer_.size()) {
        buffer_.clear();
        consumed_ = 0;
    }
    buffer_.append(data, size);
}

std::optional<std::string> FrameDecoder::next() {
    if (buffered() < 4) return std::nullopt;
    const auto* p = reinterpret_cast<const unsigned char*>(buffer_.data() + consumed_);
    const std::uint32_t size = (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) |
                               (std::uint32_t{p[2]} << 8) | std::uint32_t{p[3]};
    if (size == 0 || size > kMaxFrameBytes) {
        throw ProtocolError("frame length " + std::to_string(size) + " is outside 1.." +
                            std::to_string(kMaxFrameBytes));
    }
    if (buffered() < 4 + std::size_t{size}) return std::nullopt;
    std::string payload = buffer_.substr(consumed_ + 4, size);
    consumed_ += 4 + size;
    // Compact once the consumed prefix dominates, so a long-lived connection keeps a small buffer.
    if (consumed_ > 65536 && consumed_ * 2 > buffer_.size()) {
        buffer_.erase(0, consumed_);
        consumed_ = 0;
    }
    return payload;
}

}  // namespace dpdb::wire
