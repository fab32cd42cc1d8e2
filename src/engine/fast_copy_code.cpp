#include "engine/fast_copy_code.hpp"

#if PY_VERSION_HEX >= 0x030C0000

#include <algorithm>

#include "engine/code_tables.hpp"
#include "engine/fast_copy.hpp"

namespace dpdb::engine {
namespace fast_copy_code {

Opcodes g_op;

bool decode(PyObject* code, PyObject* raw, Decoded& d) {
    auto* co = reinterpret_cast<PyCodeObject*>(code);
    d.units = reinterpret_cast<const CodeUnit*>(PyBytes_AS_STRING(raw));
    d.n = static_cast<int>(PyBytes_GET_SIZE(raw) / 2);
    d.index_at.assign(d.n, -1);
    d.line_at.assign(d.n, -1);
    d.target.assign(d.n + 2, 0);
    int extended = 0, prefix_start = -1;
    for (int u = 0; u < d.n;) {
        const int op = d.units[u].op;
        const int arg = d.units[u].arg | extended;
        if (prefix_start < 0) prefix_start = u;
        if (op == g_op.extended_arg) {
            extended = arg << 8;
            ++u;
            continue;
        }
        Instr in{prefix_start, u + 1 + g_op.caches[op] - prefix_start, op, arg};
        d.index_at[prefix_start] = static_cast<int>(d.instrs.size());
        d.instrs.push_back(in);
        if (op == g_op.resume && d.first_traceable == 0) d.first_traceable = u + 1;
        const int next = in.start + in.size;
        if (g_op.jumps[op]) {
            const int to = g_op.backward[op] ? next - arg : next + arg;
            if (to < 0 || to > d.n) return false;
            d.target[to] = 1;
            d.jumps.emplace_back(in.start, to);
            if (op == g_op.for_iter) {
                // The exhausted path lands past END_FOR (3.13: and its POP_TOP).
                d.target[to + 1] = 1;
                if (to + kForExitSkip <= d.n) d.target[to + kForExitSkip] = 1;
                d.jumps.emplace_back(in.start, to + kForExitSkip);
            }
        }
        extended = 0;
        prefix_start = -1;
        u = next;
    }
    for (int u = 0; u < d.n; ++u) d.line_at[u] = PyCode_Addr2Line(co, u * 2);
    PyObject* table = co->co_exceptiontable;
    const auto* p = reinterpret_cast<const unsigned char*>(PyBytes_AS_STRING(table));
    const auto* end = p + PyBytes_GET_SIZE(table);
    while (p < end) {
        Handler h{};
        h.start = static_cast<int>(exception_varint(p, end));
        h.end = h.start + static_cast<int>(exception_varint(p, end));
        h.target = static_cast<int>(exception_varint(p, end));
        h.depth_lasti = static_cast<int>(exception_varint(p, end));
        if (h.target >= d.n) return false;
        d.target[h.target] = 1;
        d.handlers.push_back(h);
    }
    return true;
}

const Handler* handler_for(const Decoded& d, int unit) {
    for (const Handler& h : d.handlers)
        if (h.start <= unit && unit < h.end) return &h;
    return nullptr;
}

// A line starts at `in` as 3.12's instrumentation sees it: its line differs from the previous
// instruction's, or something jumps there.
bool starts_line(const Decoded& d, int index) {
    const Instr& in = d.instrs[index];
    if (in.start < d.first_traceable || d.line_at[in.start] < 0) return false;
    if (index == 0 || d.target[in.start]) return true;
    // CPython reports the line after the RESUME that starts the code even where it goes on (a
    // one-line function); a resumption's (after a yield or await: its arg's low bits) not.
    const Instr& before = d.instrs[index - 1];
    const bool starts_code = before.op == g_op.resume && (before.arg & 3) == 0;
    return starts_code || d.line_at[before.start] != d.line_at[in.start];
}

// Whether the frame can reach `in` from its own line: falling through from the instruction before,
// or a jump of the same line. CPython reports no line there (a backward jump's JUMP event aside),
// where the tail's slow replica would report one: a second hit of the line, or a stop too many.
bool reached_within_line(const Decoded& d, int index) {
    const Instr& in = d.instrs[index];
    const int line = d.line_at[in.start];
    // After the RESUME that starts the code the line is reported all the same.
    const Instr* before = index > 0 ? &d.instrs[index - 1] : nullptr;
    const bool starts_code = before && before->op == g_op.resume && (before->arg & 3) == 0;
    if (before && !starts_code && d.line_at[before->start] == line) return true;
    for (const auto& [from, to] : d.jumps)
        if (to == in.start && d.line_at[from] == line) return true;
    return false;
}

// Whether whatever lands on `unit` comes from its own line (a same-line jump, which reports no
// line there), or nothing does: no handler, no jump from another line.
bool reached_from_own_line_only(const Decoded& d, int unit) {
    if (!d.target[unit]) return true;
    const int line = d.line_at[unit];
    for (const Handler& h : d.handlers)
        if (h.target == unit) return false;
    bool found = false;
    for (const auto& [from, to] : d.jumps) {
        if (to != unit) continue;
        if (d.line_at[from] != line) return false;
        found = true;
    }
    return found;  // else a FOR_ITER's exit lands there
}

// The units of one instruction with `arg`, its EXTENDED_ARG prefixes and zeroed caches.
void emit(std::vector<CodeUnit>& out, int op, int arg, int width) {
    int prefixes = arg > 0xFFFF ? 2 : arg > 0xFF ? 1 : 0;
    prefixes = std::max(prefixes, width - 1);
    for (int i = prefixes; i > 0; --i) {
        CodeUnit unit{};
        unit.op = static_cast<uint8_t>(g_op.extended_arg);
        unit.arg = static_cast<uint8_t>((arg >> (8 * i)) & 0xFF);
        out.push_back(unit);
    }
    CodeUnit unit{};
    unit.op = static_cast<uint8_t>(op);
    unit.arg = static_cast<uint8_t>(arg & 0xFF);
    out.push_back(unit);
    for (int i = 0; i < g_op.caches[op]; ++i) out.push_back(CodeUnit{});
}

int arg_width(int arg) {
    return arg > 0xFFFF ? 3 : arg > 0xFF ? 2 : 1;
}

// A jump `op` at `at` whose argument depends on where it ends: the argument that fits its own
// width.
int backward_arg(int at, int to, int op) {
    for (int width = 1; width <= 3; ++width) {
        const int arg = at + width + g_op.caches[op] - to;
        if (arg_width(arg) <= width) return arg;
    }
    return -1;
}

}  // namespace fast_copy_code

using namespace fast_copy_code;

namespace {

PyObject* opcode_number(PyObject* opmap, const char* name) {
    return PyDict_GetItemString(opmap, name);  // borrowed, or null
}

}  // namespace

int fast_copy_init() {
    if (g_op.loaded) return 0;
    PyObject* opcode = PyImport_ImportModule("opcode");
    PyObject* opmap = opcode ? PyObject_GetAttrString(opcode, "opmap") : nullptr;
    PyObject* caches = opcode ? PyObject_GetAttrString(opcode, "_inline_cache_entries") : nullptr;
    int rc = opmap && caches && PyDict_Check(opmap) ? 0 : -1;
    const auto number = [&](const char* name) {
        PyObject* found = rc == 0 ? opcode_number(opmap, name) : nullptr;
        const long value = found ? PyLong_AsLong(found) : -1;
        return value >= 0 && value < 256 ? static_cast<int>(value) : -1;
    };
    if (rc == 0) {
        // 3.12 lists the cache entries per opcode number, 3.13 names them.
        PyObject *name, *number_object;
        Py_ssize_t pos = 0;
        while (PyDict_Next(opmap, &pos, &name, &number_object)) {
            const long op = PyLong_AsLong(number_object);
            if (op < 0 || op >= 256) continue;
            PyObject* count = PyDict_Check(caches)       ? PyDict_GetItem(caches, name)
                              : op < PyList_Size(caches) ? PyList_GetItem(caches, op)
                                                         : nullptr;
            g_op.caches[op] = count ? static_cast<int>(PyLong_AsLong(count)) : 0;
        }
        for (const char* name : {"JUMP_FORWARD", "POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE",
                                 "POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE", "FOR_ITER", "SEND"})
            if (const int op = number(name); op >= 0) g_op.jumps[op] = true;
        for (const char* name : {"JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT"})
            if (const int op = number(name); op >= 0) g_op.jumps[op] = g_op.backward[op] = true;
        for (int op = 0; op < 256; ++op) g_op.refused[op] = g_op.jumps[op];
        for (const char* name :
             {"RESUME", "YIELD_VALUE", "RETURN_GENERATOR", "END_FOR", "END_SEND", "CLEANUP_THROW",
              "KW_NAMES", "MAKE_CELL", "COPY_FREE_VARS", "ENTER_EXECUTOR", "EXTENDED_ARG",
              "PUSH_EXC_INFO", "CACHE", "RESERVED"})
            if (const int op = number(name); op >= 0) g_op.refused[op] = true;
        g_op.extended_arg = number("EXTENDED_ARG");
        g_op.nop = number("NOP");
        g_op.load_const = number("LOAD_CONST");
        g_op.to_bool = number("TO_BOOL");
        g_op.pop_jump_if_false = number("POP_JUMP_IF_FALSE");
        g_op.jump_forward = number("JUMP_FORWARD");
        g_op.jump_back = number("JUMP_BACKWARD_NO_INTERRUPT");
        g_op.jump_backward = number("JUMP_BACKWARD");
        g_op.resume = number("RESUME");
        g_op.for_iter = number("FOR_ITER");
        if (PyErr_Occurred() || g_op.extended_arg < 0 || g_op.nop < 0 || g_op.load_const < 0 ||
            (kPy313 && g_op.to_bool < 0) || g_op.pop_jump_if_false < 0 || g_op.jump_forward < 0 ||
            g_op.jump_back < 0 || g_op.jump_backward < 0 || g_op.resume < 0) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, "unknown opcodes");
            rc = -1;
        }
    }
    Py_XDECREF(caches);
    Py_XDECREF(opmap);
    Py_XDECREF(opcode);
    g_op.loaded = rc == 0;
    return rc;
}

}  // namespace dpdb::engine

#endif
