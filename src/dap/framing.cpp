#include "dap/framing.hpp"

#include <cctype>

namespace dpdb::dap {
namespace {

std::string lowered(std::string text) {
    for (auto& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return text;
}

}  // namespace

Frame FrameReader::next() {
    if (!broken_.empty()) return Incomplete{};
    const auto end = buffer_.find("\r\n\r\n");
    if (end == std::string::npos) {
        if (buffer_.size() > kMaxHeader) broken_ = "a DAP header longer than 8 KiB";
        return Incomplete{};
    }
    const std::string header = buffer_.substr(0, end);
    long long length = -1;
    std::string reason;
    std::size_t start = 0;
    while (start <= header.size()) {
        auto stop = header.find("\r\n", start);
        if (stop == std::string::npos) stop = header.size();
        const std::string line = header.substr(start, stop - start);
        start = stop + 2;
        const auto colon = line.find(':');
        if (colon == std::string::npos) {
            reason = "a DAP header line without a colon";
            break;
        }
        if (lowered(line.substr(0, colon)) != "content-length") continue;  // Content-Type etc.
        const auto first = line.find_first_not_of(' ', colon + 1);
        std::string value = first == std::string::npos ? "" : line.substr(first);
        value.erase(value.find_last_not_of(' ') + 1);
        if (value.empty() || value.size() > 12 ||
            value.find_first_not_of("0123456789") != std::string::npos) {
            reason = "a Content-Length that is not a number";
            break;
        }
        length = std::stoll(value);
    }
    if (reason.empty() && length < 0) reason = "a DAP header without Content-Length";
    if (!reason.empty()) {
        buffer_.erase(0, end + 4);
        return BadHeader{reason};
    }
    if (static_cast<unsigned long long>(length) > kMaxBody) {
        broken_ = "a DAP message of " + std::to_string(length) + " bytes (at most 16 MiB)";
        return Incomplete{};
    }
    if (buffer_.size() < end + 4 + static_cast<std::size_t>(length)) return Incomplete{};
    Body body{buffer_.substr(end + 4, static_cast<std::size_t>(length))};
    buffer_.erase(0, end + 4 + static_cast<std::size_t>(length));
    return body;
}

std::string encode_frame(const wire::Json& message) {
    // Whatever a program's strings hold (invalid UTF-8 in a repr) goes out replaced, not thrown.
    const std::string body = message.dump(-1, ' ', false, wire::Json::error_handler_t::replace);
    return "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

}  // namespace dpdb::dap
