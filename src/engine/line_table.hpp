// CPython 3.11+: reading a code object's location table (co_linetable, the format of
// Objects/locations.md) without Python: one pass over its entries.
#pragma once

#include <Python.h>

#if PY_VERSION_HEX >= 0x030B0000

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

// The line the table leaves its reader on: where entries appended to it start from.
inline int final_line(PyCodeObject* co) {
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
    }
    return line;
}

}  // namespace dpdb::engine

#endif
