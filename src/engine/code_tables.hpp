// CPython 3.11+: a code object's location table (co_linetable, the format of
// Objects/locations.md) and exception table (co_exceptiontable), read and extended without Python.
#pragma once

#include <Python.h>

#if PY_VERSION_HEX >= 0x030B0000

#include <algorithm>
#include <climits>
#include <string>

namespace dpdb::engine {

// One of the table's varints: six bits a byte, the seventh saying more follow.
inline int table_varint(const unsigned char*& p, const unsigned char* end) {
    int value = 0, shift = 0;
    while (p < end) {
        const unsigned char b = *p++;
        value |= (b & 63) << shift;
        shift += 6;
        if (!(b & 64)) break;
    }
    return value;
}

// Calls visit(line) for every entry of the table that has a location, in order.
template <class Visit>
inline void for_each_line_entry(PyCodeObject* co, Visit visit) {
    const auto* p = reinterpret_cast<const unsigned char*>(PyBytes_AS_STRING(co->co_linetable));
    const auto* end = p + PyBytes_GET_SIZE(co->co_linetable);
    int line = co->co_firstlineno;
    const auto signed_varint = [&] {
        const int v = table_varint(p, end);
        return (v & 1) ? -(v >> 1) : (v >> 1);
    };
    while (p < end) {
        const int kind = (*p++ >> 3) & 15;
        if (kind == 15) continue;  // no location: the line stays
        if (kind == 14) {
            line += signed_varint();
            table_varint(p, end);
            table_varint(p, end);
            table_varint(p, end);
        } else if (kind == 13) {
            line += signed_varint();
        } else if (kind >= 10) {
            line += kind - 10;
            p += 2;
        } else {
            p += 1;
        }
        visit(line);
    }
}

// The line the table leaves its reader on: where entries appended to it start from.
inline int final_line(PyCodeObject* co) {
    int line = co->co_firstlineno;
    for_each_line_entry(co, [&](int at) { line = at; });
    return line;
}

// Whether a line of `lines` (sorted) lies between the first and the last line of `co`, its
// co_firstlineno included (pdb's "break function").
template <class Lines>
inline bool has_line_in(PyCodeObject* co, const Lines& lines) {
    int low = co->co_firstlineno, high = co->co_firstlineno;
    for_each_line_entry(co, [&](int at) {
        if (at < 0) return;
        low = std::min(low, at);
        high = std::max(high, at);
    });
    const auto first = std::lower_bound(lines.begin(), lines.end(), low);
    return first != lines.end() && *first <= high;
}

// Line delta for entries with no location.
constexpr int kNoLine = INT_MIN;

// Entries for `units` code units: the first moves the line by `line_delta`, the rest stay there
// (or no location at all, kNoLine).
inline void append_line_entries(std::string& table, int units, int line_delta) {
    for (bool first = true; units > 0; first = false) {
        const int chunk = std::min(units, 8);
        if (line_delta == kNoLine) {
            table.push_back(static_cast<char>(0x80 | (15 << 3) | (chunk - 1)));
        } else {
            table.push_back(static_cast<char>(0x80 | (13 << 3) | (chunk - 1)));
            const int dl = first ? line_delta : 0;
            unsigned zig =
                dl < 0 ? (static_cast<unsigned>(-dl) << 1) | 1 : static_cast<unsigned>(dl) << 1;
            while (zig >= 64) {
                table.push_back(static_cast<char>(64 | (zig & 63)));
                zig >>= 6;
            }
            table.push_back(static_cast<char>(zig));
        }
        units -= chunk;
    }
}

// One of the exception table's varints (Objects/exception_handling_notes.txt): six bits a byte,
// big-endian, the seventh saying more follow, the eighth marking an entry's first byte.
inline unsigned exception_varint(const unsigned char*& p, const unsigned char* end) {
    unsigned value = 0;
    while (p < end) {
        const unsigned char b = *p++;
        value = (value << 6) | (b & 63);
        if (!(b & 64)) break;
    }
    return value;
}

// One field of an exception table entry; the first of an entry is marked.
inline void append_exception_varint(std::string& table, unsigned value, bool first) {
    int chunks = 1;
    while (chunks < 6 && (value >> (6 * chunks)) != 0) ++chunks;
    for (int i = chunks - 1; i >= 0; --i) {
        unsigned byte = (value >> (6 * i)) & 63;
        if (i > 0) byte |= 64;
        if (first && i == chunks - 1) byte |= 128;
        table.push_back(static_cast<char>(byte));
    }
}

}  // namespace dpdb::engine

#endif
