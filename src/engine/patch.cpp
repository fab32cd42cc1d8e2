#include "engine/patch.hpp"

#if PY_VERSION_HEX < 0x030C0000

#include <algorithm>
#include <string>

namespace dpdb::engine {
namespace {

constexpr bool kPy39 = PY_VERSION_HEX < 0x030A0000;
constexpr bool kPy311 = PY_VERSION_HEX >= 0x030B0000;
// Stack slots the checker call needs above the line's own depth.
constexpr int kCallHeadroom = kPy311 ? 2 : 1;

struct Opcodes {
    int extended_arg = -1, nop = -1, load_const = -1, pop_top = -1, call_function = -1;
    int jump_absolute = -1, push_null = -1, precall = -1, call = -1, jump_forward = -1;
    int jump_backward = -1, return_generator = -1, gen_start = -1;
    // Per opcode: 1 = relative jump, 2 = absolute jump, 3 = backward relative jump (3.11).
    std::vector<unsigned char> jump = std::vector<unsigned char>(256, 0);
    std::vector<unsigned char> caches = std::vector<unsigned char>(256, 0);
    std::vector<bool> no_fallthrough = std::vector<bool>(256, false);
    // Instructions that suspend or resume a frame: a line holding one keeps being traced, since
    // a frame resumed in it would not pass through the line's check.
    std::vector<bool> suspends = std::vector<bool>(256, false);
    // 3.9/3.10 block setups: their jump target is an exception handler.
    std::vector<bool> handler_setup = std::vector<bool>(256, false);
};
Opcodes g_op;
PyObject* g_checker = nullptr;

enum : unsigned char { kNoJump, kRelJump, kAbsJump, kBackJump };

struct Instr {
    int start;  // first code unit, EXTENDED_ARG prefixes included
    int op_at;  // code unit of the opcode itself
    int op;
    long arg;
    int size;  // code units, prefixes and inline caches included
};

struct Handler {
    int start, end, target, depth;
    bool lasti;
};

struct Edge {
    int source;  // op_at of the jumping instruction, -1 for an exception table handler
    int target;
    bool handler;
};

// A decoded code object: instructions, the line of every code unit, where line events fire on
// fall-through, jumps and (3.11) the exception table.
struct Decoded {
    PyCodeObject* co = nullptr;
    std::string bytes;
    int units = 0;
    std::vector<Instr> instrs;
    std::vector<int> index_at;  // code unit -> instruction index, -1 inside an instruction
    std::vector<int> line_at;   // code unit -> line, -1 for none
    std::vector<bool> starts;   // a line event fires on entering this unit in sequence
    std::vector<Handler> handlers;
    std::vector<Edge> edges;
    int end_line = 0;   // the line table's running line after its last entry
    int end_units = 0;  // 3.9: the address (in code units) of the lnotab's last entry
    std::string lines_table;
    std::string exception_table;
};

int op_of(const Decoded& d, int unit) {
    return static_cast<unsigned char>(d.bytes[2 * unit]);
}
int arg_of(const Decoded& d, int unit) {
    return static_cast<unsigned char>(d.bytes[2 * unit + 1]);
}

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
// Objects/exception_handling_notes.txt: big-endian 6-bit varints, bit 6 = more, bit 7 marks the
// first byte of an entry; all values in code units.
unsigned read_exc_varint(const std::string& t, size_t& p) {
    unsigned byte = static_cast<unsigned char>(t[p++]);
    unsigned value = byte & 63;
    while ((byte & 64) && p < t.size()) {
        byte = static_cast<unsigned char>(t[p++]);
        value = (value << 6) | (byte & 63);
    }
    return value;
}
void decode_handlers(Decoded& d) {
    const std::string& t = d.exception_table;
    size_t p = 0;
    while (p < t.size()) {
        Handler h;
        h.start = static_cast<int>(read_exc_varint(t, p));
        h.end = h.start + static_cast<int>(read_exc_varint(t, p));
        h.target = static_cast<int>(read_exc_varint(t, p));
        unsigned dl = read_exc_varint(t, p);
        h.depth = static_cast<int>(dl >> 1);
        h.lasti = dl & 1;
        d.handlers.push_back(h);
        d.edges.push_back({-1, h.target, true});
    }
}
#endif

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

// Static stack depth before every instruction, as the compiler computes co_stacksize. False if
// the code does not analyse cleanly (then it is not patched).
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

// Code units an instruction with this argument takes, EXTENDED_ARG prefixes included.
int arg_units(long arg) {
    int n = 1;
    while (n < 4 && (arg >> (8 * n)) != 0) ++n;
    return n;
}

void emit(std::string& out, int op, long arg, int units = 0) {
    units = std::max(units, arg_units(arg));
    for (int i = units - 1; i > 0; --i) {
        out.push_back(static_cast<char>(g_op.extended_arg));
        out.push_back(static_cast<char>((arg >> (8 * i)) & 0xff));
    }
    out.push_back(static_cast<char>(op));
    out.push_back(static_cast<char>(arg & 0xff));
    for (int i = 0; i < g_op.caches[op]; ++i) out.append(2, '\0');
}

int units_of(const std::string& out) {
    return static_cast<int>(out.size() / 2);
}

// The tail's checker call; the checker lives at co_consts[const_index].
void emit_call(std::string& out, int const_index) {
    if (kPy311) emit(out, g_op.push_null, 0);
    emit(out, g_op.load_const, const_index);
    if (kPy311) {
        emit(out, g_op.precall, 0);
        emit(out, g_op.call, 0);
    } else {
        emit(out, g_op.call_function, 0);
    }
}

// The jump from the end of a tail back to `target`.
void emit_return_jump(std::string& out, int target) {
    if (!kPy311) {
        emit(out, g_op.jump_absolute, kPy39 ? 2L * target : target);
        return;
    }
    int here = units_of(out);
    for (int n = 1; n <= 4; ++n) {
        long distance = here + n - target;  // relative to the unit after the jump
        if (arg_units(distance) <= n) {
            emit(out, g_op.jump_backward, distance, n);
            return;
        }
    }
}

// The jump that replaces a displaced span, exactly `width` units long.
void emit_site_jump(std::string& out, int start, int width, int tail_start) {
    if (kPy311)
        emit(out, g_op.jump_forward, tail_start - (start + width), width);
    else
        emit(out, g_op.jump_absolute, kPy39 ? 2L * tail_start : tail_start, width);
}

void append_line_entries(const Decoded& d, std::string& table, const std::vector<Site>& sites) {
    int line = d.end_line;
#if PY_VERSION_HEX < 0x030A0000
    int addr = d.end_units * 2;
    for (const Site& s : sites) {
        int da = s.tail_start * 2 - addr, dl = s.line - line;
        while (da > 255) {
            table.push_back(static_cast<char>(255));
            table.push_back(0);
            da -= 255;
        }
        do {
            int step = std::max(-128, std::min(127, dl));
            table.push_back(static_cast<char>(da));
            table.push_back(static_cast<char>(step));
            da = 0;
            dl -= step;
        } while (dl != 0);
        addr = s.tail_start * 2;
        line = s.line;
    }
#elif PY_VERSION_HEX < 0x030B0000
    for (const Site& s : sites) {
        int dl = s.line - line;
        while (dl > 127 || dl < -127) {
            int step = dl > 0 ? 127 : -127;
            table.push_back(0);
            table.push_back(static_cast<char>(step));
            dl -= step;
        }
        for (int left = (s.tail_end - s.tail_start) * 2; left > 0; dl = 0) {
            int chunk = std::min(left, 254);
            table.push_back(static_cast<char>(chunk));
            table.push_back(static_cast<char>(dl));
            left -= chunk;
        }
        line = s.line;
    }
#else
    for (const Site& s : sites) {
        int dl = s.line - line;
        for (int left = s.tail_end - s.tail_start; left > 0; dl = 0) {
            int chunk = std::min(left, 8);
            table.push_back(static_cast<char>(0x80 | (13 << 3) | (chunk - 1)));
            unsigned zig =
                dl < 0 ? (static_cast<unsigned>(-dl) << 1) | 1 : static_cast<unsigned>(dl) << 1;
            while (zig >= 64) {
                table.push_back(static_cast<char>(64 | (zig & 63)));
                zig >>= 6;
            }
            table.push_back(static_cast<char>(zig));
            left -= chunk;
        }
        line = s.line;
    }
#endif
}

#if PY_VERSION_HEX >= 0x030B0000
void emit_exc_varint(std::string& t, unsigned value, bool first) {
    int chunks = 1;
    while (chunks < 6 && (value >> (6 * chunks)) != 0) ++chunks;
    for (int i = chunks - 1; i >= 0; --i) {
        unsigned byte = (value >> (6 * i)) & 63;
        if (i > 0) byte |= 64;
        if (first && i == chunks - 1) byte |= 128;
        t.push_back(static_cast<char>(byte));
    }
}

const Handler* handler_for(const Decoded& d, int unit) {
    for (const Handler& h : d.handlers)
        if (h.start <= unit && unit < h.end) return &h;
    return nullptr;
}
#endif

bool is_site_start(const std::vector<Site>& sites, int unit) {
    for (const Site& s : sites)
        if (s.start == unit) return true;
    return false;
}

// The jump rules that make the checks fire exactly where the interpreter reports the line.
bool edges_allow(const Decoded& d, const std::vector<Site>& sites,
                 const std::vector<int>& bp_lines) {
    for (const Edge& e : d.edges) {
        for (const Site& s : sites)
            if (s.start < e.target && e.target <= s.end) return false;
        if (e.target < 0 || e.target >= d.units) return false;
        int line = d.line_at[e.target];
        if (!std::binary_search(bp_lines.begin(), bp_lines.end(), line)) continue;
        int source_line = e.source >= 0 ? d.line_at[e.source] : -1;
        if (is_site_start(sites, e.target)) {
            if (kPy39) continue;  // 3.9 reports every entry into a line's first address
            if (e.handler) {
                // Raised from an earlier piece of the same line: no line event there.
                int pieces = 0;
                for (const Site& s : sites) pieces += s.line == line;
                if (pieces > 1) return false;
            } else if (source_line == line && e.target > e.source) {
                return false;
            }
            continue;
        }
        // Entering a breakpoint line in its middle: fine only where no line event fires (an
        // exception handler always gets one on 3.9/3.10, and on 3.11 when raised elsewhere).
        if (e.handler) return false;
        if (e.target <= e.source) return false;
        if (!kPy39 && source_line != line) return false;
    }
    return true;
}

}  // namespace

const Site* Patch::site_in_tail(int unit) const {
    for (const Site& s : sites)
        if (s.tail_start <= unit && unit < s.tail_end) return &s;
    return nullptr;
}

bool Patch::in_span(int unit) const {
    for (const Site& s : sites)
        if (s.start <= unit && unit < s.end) return true;
    return false;
}

bool Patch::is_resume_point(int unit) const {
    for (const Site& s : sites)
        if (s.end == unit) return true;
    return false;
}

int patch_init(PyObject* checker) {
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
        g_op.return_generator = number("RETURN_GENERATOR");
        g_op.gen_start = number("GEN_START");
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
                        g_op.pop_top >= 0 &&
                        (kPy311 ? g_op.push_null >= 0 && g_op.precall >= 0 && g_op.call >= 0 &&
                                      g_op.jump_forward >= 0 && g_op.jump_backward >= 0
                                : g_op.call_function >= 0 && g_op.jump_absolute >= 0);
        if (!PyErr_Occurred()) {
            if (complete) {
                Py_INCREF(checker);
                g_checker = checker;
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

PyObject* replace_code(PyObject* code, PyObject* kwargs) {
    PyObject* replace = PyObject_GetAttrString(code, "replace");
    if (!replace) return nullptr;
    PyObject* empty = PyTuple_New(0);
    PyObject* copy = empty ? PyObject_Call(replace, empty, kwargs) : nullptr;
    Py_XDECREF(empty);
    Py_DECREF(replace);
    return copy;
}

int code_lines(PyObject* code, std::vector<int>& lines) {
    Decoded d;
    if (!decode(code, d)) return -1;
    lines.clear();
    for (const Instr& in : d.instrs) {
        int line = d.line_at[in.start];
        if (line >= 0) lines.push_back(line);
    }
    std::sort(lines.begin(), lines.end());
    lines.erase(std::unique(lines.begin(), lines.end()), lines.end());
    return 0;
}

PyObject* build_patched(PyObject* code, const std::vector<int>& bp_lines, Patch** patch,
                        bool grow_stack) {
    *patch = nullptr;
    int stacksize = 0;  // grown for the checker call, when allowed
    Decoded d;
    if (!decode(code, d)) return nullptr;
    std::vector<int> depth;
    if (!stack_depths(d, depth)) return nullptr;
    for (const Instr& in : d.instrs)
        if (g_op.suspends[in.op] &&
            std::binary_search(bp_lines.begin(), bp_lines.end(), d.line_at[in.start]))
            return nullptr;

    PyObject* consts = reinterpret_cast<PyCodeObject*>(code)->co_consts;
    const int const_index = static_cast<int>(PyTuple_GET_SIZE(consts));
    std::string probe;
    emit_call(probe, const_index);
    emit(probe, g_op.pop_top, 0);
    const int call_units = units_of(probe) - 1;  // POP_TOP follows the call
    // The jump at a site must reach any tail: size it for the longest code this can make.
    int width = 1;
    std::vector<Site> sites;
    for (bool settled = false; !settled;) {
        sites.clear();
        for (int line : bp_lines) {
            for (int u = 0; u < d.units; ++u) {
                if (!d.starts[u] || d.line_at[u] != line) continue;
                Site s;
                s.line = line;
                s.start = u;
                s.end = u;
                while (s.end - s.start < width) {
                    if (s.end >= d.units || d.index_at[s.end] < 0) return nullptr;
                    const Instr& in = d.instrs[d.index_at[s.end]];
                    if (g_op.jump[in.op] != kNoJump || g_op.suspends[in.op] ||
                        d.line_at[in.start] != line)
                        return nullptr;
                    s.end += in.size;
                }
                // The tail returns into the middle of the line, where no line event is due.
                if (s.end >= d.units || d.line_at[s.end] != line || d.starts[s.end]) return nullptr;
                for (int v = s.start + 1; v < s.end; ++v)
                    if (d.starts[v]) return nullptr;
                if (depth[s.start] < 0) return nullptr;
                if (depth[s.start] + kCallHeadroom > d.co->co_stacksize) {
                    if (!grow_stack) return nullptr;
                    stacksize = std::max(stacksize, depth[s.start] + kCallHeadroom);
                }
#if PY_VERSION_HEX >= 0x030B0000
                const Handler* h = handler_for(d, s.start);
                for (int v = s.start; v < s.end; ++v)
                    if (handler_for(d, v) != h) return nullptr;
#endif
                sites.push_back(s);
            }
        }
        if (sites.empty()) return nullptr;
        std::sort(sites.begin(), sites.end(),
                  [](const Site& a, const Site& b) { return a.start < b.start; });
        long longest = d.units;
        for (const Site& s : sites) longest += call_units + 1 + (s.end - s.start) + 4;
        int needed = arg_units(kPy39 ? 2 * longest : longest);
        settled = needed <= width;
        width = std::max(width, needed);
    }
    if (!edges_allow(d, sites, bp_lines)) return nullptr;

    std::string out = d.bytes;
    std::string lines_table = d.lines_table;
    std::string exception_table = d.exception_table;
    for (Site& s : sites) {
        s.tail_start = units_of(out);
        emit_call(out, const_index);
        s.after_call = units_of(out);
        emit(out, g_op.pop_top, 0);
        out.append(d.bytes, 2 * s.start, 2 * (s.end - s.start));
        emit_return_jump(out, s.end);
        s.tail_end = units_of(out);
        std::string jump;
        emit_site_jump(jump, s.start, width, s.tail_start);
        while (units_of(jump) < s.end - s.start) emit(jump, g_op.nop, 0);
        out.replace(2 * s.start, jump.size(), jump);
#if PY_VERSION_HEX >= 0x030B0000
        if (const Handler* h = handler_for(d, s.start)) {
            emit_exc_varint(exception_table, s.tail_start, true);
            emit_exc_varint(exception_table, s.tail_end - s.tail_start, false);
            emit_exc_varint(exception_table, h->target, false);
            emit_exc_varint(exception_table, (h->depth << 1) | (h->lasti ? 1 : 0), false);
        }
#endif
    }
    append_line_entries(d, lines_table, sites);

    PyObject* kwargs = PyDict_New();
    PyObject* extended = PyTuple_New(const_index + 1);
    if (!kwargs || !extended) {
        Py_XDECREF(kwargs);
        Py_XDECREF(extended);
        return nullptr;
    }
    for (int i = 0; i < const_index; ++i) {
        Py_INCREF(PyTuple_GET_ITEM(consts, i));
        PyTuple_SET_ITEM(extended, i, PyTuple_GET_ITEM(consts, i));
    }
    Py_INCREF(g_checker);
    PyTuple_SET_ITEM(extended, const_index, g_checker);
    int rc = PyDict_SetItemString(kwargs, "co_consts", extended);
    Py_DECREF(extended);
    auto set_bytes = [&](const char* name, const std::string& value) {
        if (rc < 0) return;
        PyObject* bytes =
            PyBytes_FromStringAndSize(value.data(), static_cast<Py_ssize_t>(value.size()));
        rc = bytes ? PyDict_SetItemString(kwargs, name, bytes) : -1;
        Py_XDECREF(bytes);
    };
    set_bytes("co_code", out);
    if (rc == 0 && stacksize > 0) {
        PyObject* size = PyLong_FromLong(stacksize);
        rc = size ? PyDict_SetItemString(kwargs, "co_stacksize", size) : -1;
        Py_XDECREF(size);
    }
    set_bytes(kPy39 ? "co_lnotab" : "co_linetable", lines_table);
#if PY_VERSION_HEX >= 0x030B0000
    set_bytes("co_exceptiontable", exception_table);
#endif
    PyObject* patched = rc == 0 ? replace_code(code, kwargs) : nullptr;
    Py_DECREF(kwargs);
    if (!patched) return nullptr;
    auto* p = new Patch;
    Py_INCREF(code);
    p->original = code;
    p->code_units = d.units;
    p->sites = std::move(sites);
    if (code_lines(code, p->lines) < 0) {
        delete p;
        Py_DECREF(patched);
        return nullptr;
    }
    *patch = p;
    return patched;
}

}  // namespace dpdb::engine

#endif
