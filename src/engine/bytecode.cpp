#include "engine/bytecode.hpp"

#if PY_VERSION_HEX < 0x030C0000

#include <algorithm>
#include <string>

#include "engine/code_tables.hpp"

namespace dpdb::engine {

Opcodes g_op;

namespace {

bool read_bytes_attr(PyObject* code, const char* name, std::string& out) {
    PyObject* value = PyObject_GetAttrString(code, name);
    if (!value) return false;
    char* data;
    Py_ssize_t size;
    if (PyBytes_AsStringAndSize(value, &data, &size) < 0) {
        Py_DECREF(value);
        return false;
    }
    out.assign(data, static_cast<size_t>(size));
    Py_DECREF(value);
    return true;
}

void fill_lines(Decoded& d, int from, int to, int line) {
    for (int u = std::max(from, 0); u < std::min(to, d.units); ++u) d.line_at[u] = line;
}

#if PY_VERSION_HEX < 0x030A0000
// lnotab: (address increment, signed line increment) byte pairs; 3.9 reports a line where an
// entry with a non-zero line increment lands, and at address 0.
void decode_lines(Decoded& d) {
    int addr = 0, line = d.co->co_firstlineno, filled = 0;
    d.starts[0] = true;
    for (size_t i = 0; i + 1 < d.lines_table.size(); i += 2) {
        int next = addr + static_cast<unsigned char>(d.lines_table[i]);
        int delta = static_cast<signed char>(d.lines_table[i + 1]);
        if (next != addr) {
            fill_lines(d, filled, next / 2, line);
            filled = next / 2;
        }
        addr = next;
        line += delta;
        if (delta != 0 && addr / 2 < d.units) d.starts[addr / 2] = true;
    }
    fill_lines(d, filled, d.units, line);
    d.end_line = line;
    d.end_units = addr / 2;
}
#else
#if PY_VERSION_HEX < 0x030B0000
// co_linetable: (byte length, signed line increment) pairs, -128 = no line.
void decode_ranges(Decoded& d) {
    int pos = 0, line = d.co->co_firstlineno;
    for (size_t i = 0; i + 1 < d.lines_table.size(); i += 2) {
        int len = static_cast<unsigned char>(d.lines_table[i]) / 2;
        int delta = static_cast<signed char>(d.lines_table[i + 1]);
        int here = -1;
        if (delta != -128) here = line += delta;
        fill_lines(d, pos, pos + len, here);
        pos += len;
    }
    d.end_line = line;
}
#else
// Objects/locations.md: one entry per 1-8 code units, its kind in the first byte.
unsigned read_varint(const std::string& t, size_t& p) {
    unsigned byte = static_cast<unsigned char>(t[p++]);
    unsigned value = byte & 63, shift = 0;
    while ((byte & 64) && p < t.size()) {
        byte = static_cast<unsigned char>(t[p++]);
        shift += 6;
        value |= (byte & 63) << shift;
    }
    return value;
}
int read_svarint(const std::string& t, size_t& p) {
    unsigned u = read_varint(t, p);
    return (u & 1) ? -static_cast<int>(u >> 1) : static_cast<int>(u >> 1);
}
void decode_ranges(Decoded& d) {
    const std::string& t = d.lines_table;
    int pos = 0, line = d.co->co_firstlineno;
    size_t p = 0;
    while (p < t.size()) {
        unsigned first = static_cast<unsigned char>(t[p++]);
        int kind = (first >> 3) & 15, len = (first & 7) + 1, here;
        if (kind == 15) {
            here = -1;
        } else if (kind == 14) {
            here = line += read_svarint(t, p);
            for (int i = 0; i < 3; ++i) read_varint(t, p);
        } else if (kind == 13) {
            here = line += read_svarint(t, p);
        } else if (kind >= 10) {
            here = line += kind - 10;
            p += 2;
        } else {
            here = line;
            p += 1;
        }
        fill_lines(d, pos, pos + len, here);
        pos += len;
    }
    d.end_line = line;
}
#endif
// 3.10/3.11 report a line when it differs from the previous instruction's (or on the first
// traceable instruction).
void decode_lines(Decoded& d) {
    decode_ranges(d);
#if PY_VERSION_HEX >= 0x030B0000
    const int first = d.co->_co_firsttraceable;
#else
    const int first = -1;
#endif
    int previous = -1;
    bool initial = true;
    for (const Instr& in : d.instrs) {
        if (in.start <= first) continue;
        int line = d.line_at[in.start];
        if (line != -1 && (initial || line != previous)) d.starts[in.start] = true;
        initial = false;
        previous = line;
    }
}
#endif

#if PY_VERSION_HEX >= 0x030B0000
void decode_handlers(Decoded& d) {
    const auto* p = reinterpret_cast<const unsigned char*>(d.exception_table.data());
    const auto* end = p + d.exception_table.size();
    while (p < end) {
        Handler h;
        h.start = static_cast<int>(exception_varint(p, end));
        h.end = h.start + static_cast<int>(exception_varint(p, end));
        h.target = static_cast<int>(exception_varint(p, end));
        unsigned dl = exception_varint(p, end);
        h.depth = static_cast<int>(dl >> 1);
        h.lasti = dl & 1;
        d.handlers.push_back(h);
        d.edges.push_back({-1, h.target, true});
    }
}
#endif

}  // namespace

bool decode(PyObject* code, Decoded& d) {
    d.co = reinterpret_cast<PyCodeObject*>(code);
    if (!read_bytes_attr(code, "co_code", d.bytes)) return false;
    if (!read_bytes_attr(code, kPy39 ? "co_lnotab" : "co_linetable", d.lines_table)) return false;
#if PY_VERSION_HEX >= 0x030B0000
    if (!read_bytes_attr(code, "co_exceptiontable", d.exception_table)) return false;
#endif
    d.units = static_cast<int>(d.bytes.size() / 2);
    d.index_at.assign(d.units, -1);
    d.line_at.assign(d.units, -1);
    d.starts.assign(d.units, false);
    for (int u = 0; u < d.units;) {
        Instr in{u, u, 0, 0, 0};
        long arg = 0;
        while (u < d.units - 1 && op_of(d, u) == g_op.extended_arg)
            arg = (arg | arg_of(d, u++)) << 8;
        in.op_at = u;
        in.op = op_of(d, u);
        in.arg = arg | arg_of(d, u);
        in.size = u + 1 + g_op.caches[in.op] - in.start;
        d.index_at[in.start] = static_cast<int>(d.instrs.size());
        d.instrs.push_back(in);
        u = in.start + in.size;
    }
    for (const Instr& in : d.instrs) {
        int next = in.op_at + 1 + g_op.caches[in.op];
        int target;
        switch (g_op.jump[in.op]) {
            case kRelJump:
                target = next + static_cast<int>(kPy39 ? in.arg / 2 : in.arg);
                break;
            case kAbsJump:
                target = static_cast<int>(kPy39 ? in.arg / 2 : in.arg);
                break;
            case kBackJump:
                target = next - static_cast<int>(in.arg);
                break;
            default:
                continue;
        }
        d.edges.push_back({in.op_at, target, static_cast<bool>(g_op.handler_setup[in.op])});
    }
#if PY_VERSION_HEX >= 0x030B0000
    decode_handlers(d);
#endif
    decode_lines(d);
    return true;
}

bool stack_depths(const Decoded& d, std::vector<int>& depth) {
    depth.assign(d.units, -1);
    const int limit = d.co->co_stacksize;
    std::vector<std::pair<int, int>> work;
    auto push = [&](int unit, int level) {
        if (unit < 0 || unit >= d.units || d.index_at[unit] < 0 || level < 0 || level > limit)
            return false;
        if (depth[unit] < level) {
            depth[unit] = level;
            work.emplace_back(unit, level);
        }
        return true;
    };
    // 3.10 generators start with GEN_START popping the value their first send() pushed.
    int entry = !d.instrs.empty() && d.instrs[0].op == g_op.gen_start ? 1 : 0;
    if (!push(0, entry)) return false;
    for (const Handler& h : d.handlers)
        if (!push(h.target, h.depth + (h.lasti ? 1 : 0) + 1)) return false;
    while (!work.empty()) {
        auto [unit, level] = work.back();
        work.pop_back();
        if (depth[unit] != level) continue;
        const Instr& in = d.instrs[d.index_at[unit]];
        int oparg = static_cast<int>(in.arg);
        int effect = PyCompile_OpcodeStackEffectWithJump(in.op, oparg, 0);
        // The first send() pushes the value RETURN_GENERATOR's successor pops.
        if (in.op == g_op.return_generator) effect = 1;
        if (effect == PY_INVALID_STACK_EFFECT) return false;
        if (g_op.jump[in.op] != kNoJump) {
            int jeffect = PyCompile_OpcodeStackEffectWithJump(in.op, oparg, 1);
            if (jeffect == PY_INVALID_STACK_EFFECT) return false;
            for (const Edge& e : d.edges)
                if (e.source == in.op_at && !push(e.target, level + jeffect)) return false;
        }
        if (level + effect < 0 || level + effect > limit) return false;
        if (!g_op.no_fallthrough[in.op] && in.start + in.size < d.units &&
            !push(in.start + in.size, level + effect))
            return false;
    }
    return true;
}

int opcodes_init() {
    PyObject* opcode = PyImport_ImportModule("opcode");
    if (!opcode) return -1;
    PyObject* opmap = PyObject_GetAttrString(opcode, "opmap");
    PyObject* hasjrel = PyObject_GetAttrString(opcode, "hasjrel");
    PyObject* hasjabs = PyObject_GetAttrString(opcode, "hasjabs");
    PyObject* caches = kPy311 ? PyObject_GetAttrString(opcode, "_inline_cache_entries") : nullptr;
    Py_DECREF(opcode);
    int rc = -1;
    auto number = [&](const char* name) {
        PyObject* value = PyDict_GetItemString(opmap, name);
        return value ? static_cast<int>(PyLong_AsLong(value)) : -1;
    };
    auto mark = [&](PyObject* list, unsigned char kind) {
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list); ++i) {
            long op = PyLong_AsLong(PyList_GET_ITEM(list, i));
            if (op >= 0 && op < 256) g_op.jump[op] = kind;
        }
    };
    if (opmap && hasjrel && hasjabs && (!kPy311 || caches) && PyDict_Check(opmap) &&
        PyList_Check(hasjrel) && PyList_Check(hasjabs)) {
        g_op.extended_arg = number("EXTENDED_ARG");
        g_op.nop = number("NOP");
        g_op.load_const = number("LOAD_CONST");
        g_op.pop_top = number("POP_TOP");
        g_op.call_function = number("CALL_FUNCTION");
        g_op.jump_absolute = number("JUMP_ABSOLUTE");
        g_op.push_null = number("PUSH_NULL");
        g_op.precall = number("PRECALL");
        g_op.call = number("CALL");
        g_op.jump_forward = number("JUMP_FORWARD");
        g_op.jump_backward = number("JUMP_BACKWARD");
        g_op.for_iter = number("FOR_ITER");
        g_op.return_generator = number("RETURN_GENERATOR");
        g_op.gen_start = number("GEN_START");
        g_op.pop_jump_if_false = number(kPy311 ? "POP_JUMP_FORWARD_IF_FALSE" : "POP_JUMP_IF_FALSE");
        mark(hasjrel, kRelJump);
        mark(hasjabs, kAbsJump);
        for (const char* name : {"JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT",
                                 "POP_JUMP_BACKWARD_IF_NOT_NONE", "POP_JUMP_BACKWARD_IF_NONE",
                                 "POP_JUMP_BACKWARD_IF_FALSE", "POP_JUMP_BACKWARD_IF_TRUE"})
            if (int op = number(name); op >= 0) g_op.jump[op] = kBackJump;
        for (const char* name : {"RETURN_VALUE", "RAISE_VARARGS", "RERAISE", "JUMP_ABSOLUTE",
                                 "JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT"})
            if (int op = number(name); op >= 0) g_op.no_fallthrough[op] = true;
        for (const char* name : {"YIELD_VALUE", "YIELD_FROM", "SEND", "GEN_START",
                                 "RETURN_GENERATOR", "RESUME", "GET_AWAITABLE"})
            if (int op = number(name); op >= 0) g_op.suspends[op] = true;
        for (const char* name : {"SETUP_FINALLY", "SETUP_WITH", "SETUP_ASYNC_WITH"})
            if (int op = number(name); op >= 0) g_op.handler_setup[op] = true;
        if (caches) {
            for (Py_ssize_t i = 0; i < PySequence_Size(caches) && i < 256; ++i) {
                PyObject* n = PySequence_GetItem(caches, i);
                if (!n) break;
                g_op.caches[i] = static_cast<unsigned char>(PyLong_AsLong(n));
                Py_DECREF(n);
            }
        }
        bool complete = g_op.extended_arg >= 0 && g_op.nop >= 0 && g_op.load_const >= 0 &&
                        g_op.pop_top >= 0 && g_op.pop_jump_if_false >= 0 &&
                        (kPy311 ? g_op.push_null >= 0 && g_op.precall >= 0 && g_op.call >= 0 &&
                                      g_op.jump_forward >= 0 && g_op.jump_backward >= 0
                                : g_op.call_function >= 0 && g_op.jump_absolute >= 0);
        if (!PyErr_Occurred()) {
            if (complete) {
                rc = 0;
            } else {
                PyErr_SetString(PyExc_RuntimeError, "dpdb engine: unexpected opcode module");
            }
        }
    }
    Py_XDECREF(opmap);
    Py_XDECREF(hasjrel);
    Py_XDECREF(hasjabs);
    Py_XDECREF(caches);
    return rc;
}

}  // namespace dpdb::engine

#endif
