#include "attach/line_table.hpp"

#include <cstddef>

namespace dpdb::attach {
namespace {

constexpr int kNoLine = -128;  // 3.10: a line delta that marks bytecode without a line
constexpr int kCodeUnit = 2;   // bytes per instruction word, 3.10 on

// The location table's entry codes (the upper nibble of an entry's first byte, less its top bit).
constexpr int kOneLineFirst = 10;  // 10, 11, 12: line delta 0, 1, 2
constexpr int kNoColumns = 13;
constexpr int kLong = 14;
constexpr int kNoLocation = 15;

int signed_byte(char c) {
    return static_cast<signed char>(c);
}
int unsigned_byte(char c) {
    return static_cast<unsigned char>(c);
}

// A varint of the location table: 6 bits a byte, the 7th saying another byte follows.
unsigned varint(std::string_view table, std::size_t* at) {
    unsigned value = 0;
    for (unsigned shift = 0; *at < table.size() && shift < 32; shift += 6) {
        const int byte = unsigned_byte(table[(*at)++]);
        value |= static_cast<unsigned>(byte & 63) << shift;
        if ((byte & 64) == 0) break;
    }
    return value;
}

int signed_varint(std::string_view table, std::size_t* at) {
    const unsigned value = varint(table, at);
    return (value & 1) != 0 ? -static_cast<int>(value >> 1) : static_cast<int>(value >> 1);
}

}  // namespace

int lnotab_line(std::string_view table, int first_line, int offset) {
    if (offset < 0) return first_line;
    int line = first_line;
    int address = 0;
    for (std::size_t i = 0; i + 1 < table.size(); i += 2) {
        address += unsigned_byte(table[i]);
        if (address > offset) break;
        line += signed_byte(table[i + 1]);
    }
    return line;
}

int linetable_line(std::string_view table, int first_line, int offset) {
    if (offset < 0) return first_line;
    int line = first_line;
    int start = 0;
    for (std::size_t i = 0; i + 1 < table.size(); i += 2) {
        const int end = start + unsigned_byte(table[i]);
        const int delta = signed_byte(table[i + 1]);
        if (delta != kNoLine) line += delta;
        if (offset >= start && offset < end) return delta == kNoLine ? -1 : line;
        start = end;
    }
    return -1;
}

int location_table_line(std::string_view table, int first_line, int offset) {
    if (offset < 0) return first_line;
    int line = first_line;
    int start = 0;
    std::size_t at = 0;
    while (at < table.size()) {
        const int head = unsigned_byte(table[at++]);
        const int code = (head >> 3) & 15;
        const int end = start + ((head & 7) + 1) * kCodeUnit;
        if (code == kNoColumns || code == kLong) {
            line += signed_varint(table, &at);
        } else if (code >= kOneLineFirst && code < kNoColumns) {
            line += code - kOneLineFirst;
        }
        if (offset >= start && offset < end) return code == kNoLocation ? -1 : line;
        start = end;
        // The rest of the entry (columns, an end line): up to the next entry's first byte.
        while (at < table.size() && (unsigned_byte(table[at]) & 128) == 0) ++at;
    }
    return -1;
}

}  // namespace dpdb::attach
