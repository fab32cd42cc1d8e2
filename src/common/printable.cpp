#include "common/printable.hpp"

namespace dpdb {
namespace {

// The length of the UTF-8 sequence starting at text[i] when it is valid and printable (no C1
// control character), else 0.
std::size_t printable_sequence(std::string_view text, std::size_t i) {
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char lead = byte(i);
    std::size_t length = 0;
    if (lead >= 0xC2 && lead <= 0xDF) {
        length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        length = 3;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        length = 4;
    } else {
        return 0;
    }
    if (i + length > text.size()) return 0;
    for (std::size_t k = 1; k < length; ++k) {
        if ((byte(i + k) & 0xC0) != 0x80) return 0;
    }
    // Overlong forms, surrogates and code points past U+10FFFF.
    const unsigned char second = byte(i + 1);
    if (lead == 0xE0 && second < 0xA0) return 0;
    if (lead == 0xED && second > 0x9F) return 0;
    if (lead == 0xF0 && second < 0x90) return 0;
    if (lead == 0xF4 && second > 0x8F) return 0;
    if (lead == 0xC2 && second < 0xA0) return 0;  // C1 controls U+0080..U+009F (CSI is U+009B)
    // Bidirectional overrides and isolates (U+202A..U+202E, U+2066..U+2069) and the marks
    // U+200E, U+200F: they reorder what a terminal shows after them ("Trojan Source").
    if (lead == 0xE2) {
        const unsigned char third = byte(i + 2);
        if (second == 0x80 &&
            (third == 0x8E || third == 0x8F || (third >= 0xAA && third <= 0xAE))) {
            return 0;
        }
        if (second == 0x81 && third >= 0xA6 && third <= 0xA9) return 0;
    }
    return length;
}

}  // namespace

std::string printable(std::string_view text, std::size_t bound) {
    static constexpr char kHex[] = "0123456789abcdef";
    const std::size_t end = text.size() < bound ? text.size() : bound;
    std::string out;
    out.reserve(end + 16);
    std::size_t i = 0;
    while (i < end) {
        const unsigned char c = static_cast<unsigned char>(text[i]);
        if (c == '\n') {
            out += "\\n";
        } else if (c == '\t') {
            out += "\\t";
        } else if (c == '\r') {
            out += "\\r";
        } else if (c >= 0x20 && c < 0x7F) {
            out += static_cast<char>(c);
        } else if (const std::size_t length = c >= 0x80 ? printable_sequence(text, i) : 0;
                   length > 0 && i + length <= end) {
            out.append(text.substr(i, length));
            i += length;
            continue;
        } else {
            out += "\\x";
            out += kHex[c >> 4];
            out += kHex[c & 0xF];
        }
        ++i;
    }
    if (text.size() > end) out += "... (" + std::to_string(text.size() - end) + " more bytes)";
    return out;
}

std::string shown_lines(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    std::size_t start = 0;
    for (;;) {
        const auto end = text.find('\n', start);
        out += shown(text.substr(start, end == std::string_view::npos ? end : end - start));
        if (end == std::string_view::npos) return out;
        out += '\n';
        start = end + 1;
    }
}

std::string cut_text(std::string text, std::size_t bound) {
    if (text.size() <= bound) return text;
    // Back up to the start of the character that crosses the bound.
    std::size_t end = bound;
    while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
    text.resize(end);
    return text + "…";
}

}  // namespace dpdb
