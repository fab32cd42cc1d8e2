#include "engine/patch.hpp"

#if PY_VERSION_HEX < 0x030C0000

#include <algorithm>
#include <string>

#include "engine/bytecode.hpp"
#include "engine/code_tables.hpp"
#include "engine/condition_guard.hpp"

namespace dpdb::engine {
namespace {

// Stack slots the checker call needs above the line's own depth.
constexpr int kCallHeadroom = kPy311 ? 2 : 1;

PyObject* g_checker = nullptr;

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

// The tail's guard (condition_guard.hpp), at co_consts[const_index]: when false, the jump over
// the next `skipped` code units (the checker call and its POP_TOP).
void emit_guard(std::string& out, int const_index, int skipped) {
    emit(out, g_op.load_const, const_index);
    if (kPy311) {
        emit(out, g_op.pop_jump_if_false, skipped);
        return;
    }
    const int here = units_of(out);
    for (int n = 1; n <= 4; ++n) {
        long target = here + n + skipped;
        if (arg_units(kPy39 ? 2 * target : target) <= n) {
            emit(out, g_op.pop_jump_if_false, kPy39 ? 2 * target : target, n);
            return;
        }
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

// The jump that replaces a jump site's own jump, in its exact width: relative, since the jump's
// width is fixed and its tail lies past the end of the code. False when the tail is out of reach.
bool emit_jump_site_jump(std::string& out, int start, int width, int tail_start) {
    long distance = tail_start - (start + width);
    if (kPy39) distance *= 2;
    if (arg_units(distance) > width) return false;
    emit(out, g_op.jump_forward, distance, width);
    return true;
}

void append_tail_lines(const Decoded& d, std::string& table, const std::vector<Site>& sites) {
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
        append_line_entries(table, s.tail_end - s.tail_start, s.line - line);
        line = s.line;
    }
#endif
}

#if PY_VERSION_HEX >= 0x030B0000
const Handler* handler_for(const Decoded& d, int unit) {
    for (const Handler& h : d.handlers)
        if (h.start <= unit && unit < h.end) return &h;
    return nullptr;
}
#endif

// The instruction whose code units hold `unit` (its EXTENDED_ARG prefixes and caches included),
// or null.
const Instr* instruction_holding(const Decoded& d, int unit) {
    while (unit > 0 && d.index_at[unit] < 0) --unit;
    return unit >= 0 && d.index_at[unit] >= 0 ? &d.instrs[d.index_at[unit]] : nullptr;
}

// 3.10/3.11: a line start that nothing falls into and that only forward jumps of its own line
// reach (an `if`'s implicit return, a `for` loop's exit to an outer loop's jump back) never
// reports its line: no check belongs there. 3.9 reports every entry into a line's first address.
bool reports_no_line(const Decoded& d, int unit) {
    if (kPy39 || unit == 0) return false;
    const Instr* before = instruction_holding(d, unit - 1);
    if (!before || !g_op.no_fallthrough[before->op]) return false;
    for (const Edge& e : d.edges) {
        if (e.target != unit) continue;
        if (e.handler || e.source < 0 || e.source > unit || d.line_at[e.source] != d.line_at[unit])
            return false;
    }
    return true;
}

bool is_site_start(const std::vector<Site>& sites, int unit) {
    for (const Site& s : sites)
        if (!s.is_jump() && s.start == unit) return true;
    return false;
}

// The jump sites (patch.hpp): every unconditional backward jump to the middle of a breakpoint line.
// Other edges there are left to edges_allow, which refuses them.
bool find_jump_sites(const Decoded& d, const std::vector<int>& bp_lines,
                     const std::vector<int>& depth, std::vector<Site>& found) {
    const int jump_op = kPy311 ? g_op.jump_backward : g_op.jump_absolute;
    for (const Edge& e : d.edges) {
        if (e.handler || e.source < 0 || e.target < 0 || e.target > e.source) continue;
        if (e.target >= d.units || d.starts[e.target] || op_of(d, e.source) != jump_op) continue;
        if (!std::binary_search(bp_lines.begin(), bp_lines.end(), d.line_at[e.target])) continue;
        const Instr* holding = instruction_holding(d, e.source);
        if (!holding) return false;
        const Instr& in = *holding;
        if (in.op_at != e.source || depth[in.start] < 0) return false;
#if PY_VERSION_HEX >= 0x030B0000
        for (int v = in.start; v < in.start + in.size; ++v)
            if (handler_for(d, v) != handler_for(d, in.start)) return false;
#endif
        Site s;
        s.line = d.line_at[e.target];
        s.start = in.start;
        s.end = in.start + in.size;
        s.resume = e.target;
        found.push_back(s);
    }
    return true;
}

// The jump rules that make the checks fire exactly where the interpreter reports the line.
bool edges_allow(const Decoded& d, const std::vector<Site>& sites,
                 const std::vector<int>& bp_lines) {
    for (const Edge& e : d.edges) {
        bool displaced = false;  // the jump of a jump site, whose tail reports the line
        for (const Site& s : sites)
            displaced |= !e.handler && s.is_jump() && s.start <= e.source && e.source < s.end;
        // Not into a displaced span, nor (but from a jump site's tail) where a tail returns.
        for (const Site& s : sites) {
            if (displaced && !s.is_jump() && e.target == s.loop) continue;
            if (s.start < e.target &&
                (e.target < s.end || (e.target == s.end && !s.is_jump() && !displaced)))
                return false;
            // A tail's FOR_ITER leaves the loop by a jump back: where the original's does, a
            // line event is due (a new line starts there) and the tracer delivers it.
            if (!s.is_jump() && s.loop >= 0 && e.source == s.loop &&
                (!d.starts[e.target] || d.line_at[e.target] == s.line))
                return false;
        }
        if (e.target < 0 || e.target >= d.units) return false;
        if (displaced) continue;
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
    for (const Site& s : sites) {
        if (s.is_jump() ? s.loop < 0 && s.resume == unit : s.quiet_end && s.end == unit)
            return true;
    }
    return false;
}

int patch_init(PyObject* checker) {
    if (opcodes_init() < 0) return -1;
    Py_INCREF(checker);
    g_checker = checker;
    return 0;
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
    // 3.9: a line that suspends the frame gets its event again as the frame resumes. 3.10/3.11
    // report no line at a resume (the next is the jump back to the loop's FOR_ITER, a site of
    // its own), nor at the start's RESUME, which runs before any line event.
    for (const Instr& in : d.instrs)
        if (kPy39 && g_op.suspends[in.op] &&
            std::binary_search(bp_lines.begin(), bp_lines.end(), d.line_at[in.start]))
            return nullptr;

    PyObject* consts = reinterpret_cast<PyCodeObject*>(code)->co_consts;
    const int const_index = static_cast<int>(PyTuple_GET_SIZE(consts));
    std::string probe;
    emit_call(probe, const_index);
    emit(probe, g_op.pop_top, 0);
    const int call_units = units_of(probe) - 1;  // POP_TOP follows the call
    const bool guarded = condition_guard_allowed();
    constexpr int kGuardUnits = 8;  // at most: LOAD_CONST and the jump, each with prefixes
    // The jump at a site must reach any tail: size it for the longest code this can make.
    int width = 1;
    std::vector<Site> jump_sites;
    if (!find_jump_sites(d, bp_lines, depth, jump_sites)) return nullptr;
    for (const Site& s : jump_sites) {
        if (depth[s.start] + kCallHeadroom <= d.co->co_stacksize) continue;
        if (!grow_stack) return nullptr;
        stacksize = std::max(stacksize, depth[s.start] + kCallHeadroom);
    }
    std::vector<Site> sites;
    for (bool settled = false; !settled;) {
        sites.clear();
        for (int line : bp_lines) {
            for (int u = 0; u < d.units; ++u) {
                if (!d.starts[u] || d.line_at[u] != line || reports_no_line(d, u)) continue;
                Site s;
                s.line = line;
                s.start = u;
                s.end = u;
                s.resume = u;
                while (s.end - s.start < width) {
                    if (s.loop >= 0 || s.end >= d.units || d.index_at[s.end] < 0) return nullptr;
                    const Instr& in = d.instrs[d.index_at[s.end]];
                    if (in.op == g_op.for_iter && in.start == in.op_at &&
                        d.line_at[in.start] == line) {
                        s.loop = in.start;
                        s.loop_exit = -1;
                        for (const Edge& e : d.edges)
                            if (!e.handler && e.source == in.op_at) s.loop_exit = e.target;
                        if (s.loop_exit < 0) return nullptr;
                    } else if (g_op.jump[in.op] != kNoJump || g_op.suspends[in.op] ||
                               d.line_at[in.start] != line) {
                        return nullptr;
                    }
                    s.end += in.size;
                }
                s.loop_next = s.end;
                // The tail returns into the middle of the line, where no line event is due, or
                // from its FOR_ITER (a jump back, as the loop's own) to the next line's start.
                if (s.end >= d.units) return nullptr;
                s.quiet_end = !d.starts[s.end];
                if (s.loop < 0 && (d.line_at[s.end] != line || d.starts[s.end])) return nullptr;
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
        sites.insert(sites.end(), jump_sites.begin(), jump_sites.end());
        std::sort(sites.begin(), sites.end(),
                  [](const Site& a, const Site& b) { return a.start < b.start; });
        long longest = d.units;
        for (const Site& s : sites)
            longest += (guarded ? kGuardUnits : 0) + call_units + 1 + (s.end - s.start) + 10;
        int needed = arg_units(kPy39 ? 2 * longest : longest);
        settled = needed <= width;
        width = std::max(width, needed);
    }
    for (Site& j : sites) {
        if (!j.is_jump()) continue;
        for (const Site& s : sites) {
            if (s.is_jump() || j.resume <= s.start || j.resume >= s.end) continue;
            if (j.resume != s.loop) return nullptr;
#if PY_VERSION_HEX >= 0x030B0000
            if (handler_for(d, j.start) != handler_for(d, s.loop)) return nullptr;
#endif
            j.loop = s.loop;
            j.loop_next = s.loop_next;
            j.loop_exit = s.loop_exit;
        }
    }
    if (!edges_allow(d, sites, bp_lines)) return nullptr;

    std::string out = d.bytes;
    std::string lines_table = d.lines_table;
    std::string exception_table = d.exception_table;
    for (std::size_t i = 0; i < sites.size(); ++i) {
        Site& s = sites[i];
        s.tail_start = units_of(out);
        if (guarded) emit_guard(out, const_index + 1 + static_cast<int>(i), call_units + 1);
        emit_call(out, const_index);
        s.after_call = units_of(out);
        emit(out, g_op.pop_top, 0);
        std::string jump;
        if (!s.is_jump())
            out.append(d.bytes, 2 * static_cast<std::size_t>(s.start),
                       2 * static_cast<std::size_t>((s.loop < 0 ? s.end : s.loop) - s.start));
        if (s.loop >= 0) {
            // FOR_ITER over the jump back to the loop's next unit, to the jump to its exit.
            const int for_iter = units_of(out);
            emit(out, g_op.for_iter, 0, 1);
            emit_return_jump(out, s.loop_next);
            const int over = units_of(out) - (for_iter + 1);
            if (arg_units(kPy39 ? 2 * over : over) > 1) return nullptr;
            out[2 * for_iter + 1] = static_cast<char>(kPy39 ? 2 * over : over);
            emit_return_jump(out, s.loop_exit);
            if (s.is_jump()) s.resume = for_iter;
        } else {
            emit_return_jump(out, s.is_jump() ? s.resume : s.end);
        }
        if (s.is_jump()) {
            if (!emit_jump_site_jump(jump, s.start, s.end - s.start, s.tail_start)) return nullptr;
        } else {
            emit_site_jump(jump, s.start, width, s.tail_start);
            while (units_of(jump) < s.end - s.start) emit(jump, g_op.nop, 0);
        }
        if (units_of(jump) != s.end - s.start) return nullptr;
        s.tail_end = units_of(out);
        out.replace(2 * static_cast<std::size_t>(s.start), jump.size(), jump);
#if PY_VERSION_HEX >= 0x030B0000
        if (const Handler* h = handler_for(d, s.start)) {
            append_exception_varint(exception_table, s.tail_start, true);
            append_exception_varint(exception_table, s.tail_end - s.tail_start, false);
            append_exception_varint(exception_table, h->target, false);
            append_exception_varint(exception_table, (h->depth << 1) | (h->lasti ? 1 : 0), false);
        }
#endif
    }
    append_tail_lines(d, lines_table, sites);

    const auto guards = guarded ? static_cast<Py_ssize_t>(sites.size()) : 0;
    PyObject* kwargs = PyDict_New();
    PyObject* extended = PyTuple_New(const_index + 1 + guards);
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
    int rc = 0;
    for (Py_ssize_t i = 0; i < guards; ++i) {
        PyObject* guard = new_condition_guard(sites[i].line, sites[i].start);
        if (!guard) rc = -1;
        PyTuple_SET_ITEM(extended, const_index + 1 + i, guard);  // a null slot is never read
    }
    if (rc == 0) rc = PyDict_SetItemString(kwargs, "co_consts", extended);
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
