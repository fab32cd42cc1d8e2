#include "engine/fast_copy.hpp"

#if PY_VERSION_HEX >= 0x030C0000

#include <algorithm>
#include <string>

#include "engine/code_tables.hpp"
#include "engine/condition_guard.hpp"
#include "engine/fast_copy_code.hpp"
#include "engine/frame_access.hpp"

namespace dpdb::engine {

using namespace fast_copy_code;

namespace {

bool g_making = false;

// Whether the instructions from index `first` can be displaced to cover `width` units.
bool choose_span(const Decoded& d, int first, int width, FastSite& c) {
    const Instr& head = d.instrs[first];
    const Handler* handler = handler_for(d, head.start);
    int covered = 0, i = first;
    for (; covered < width; ++i) {
        if (i >= static_cast<int>(d.instrs.size())) return false;
        const Instr& in = d.instrs[i];
        if (g_op.refused[in.op] || d.line_at[in.start] != d.line_at[head.start]) return false;
        if (i > first && d.target[in.start]) return false;
        for (int u = in.start; u < in.start + in.size; ++u)
            if (handler_for(d, u) != handler || d.line_at[u] != d.line_at[head.start]) return false;
        covered += in.size;
    }
    // A jump from another line into the line where the tail returns would lose its event there
    // (fast_copy.hpp); a line that ends the code (a return) runs once per call.
    if (head.start + covered >= d.n || !reached_from_own_line_only(d, head.start + covered))
        return false;
    c.start = head.start;
    c.end = head.start + covered;
    return true;
}

// Units of a site's tail given its displaced span (the jumps' widths counted at their widest).
int tail_units(const FastSite& c, int guard_index) {
    const int span = c.end - c.start;
    const int guard = arg_width(guard_index) + (kPy313 ? 1 + g_op.caches[g_op.to_bool] : 0);
    const int branch = 2 + g_op.caches[g_op.pop_jump_if_false];
    const int back = 3 + g_op.caches[g_op.jump_back];
    return guard + branch + 2 * (span + back);
}

int jump_tail_units(int guard_index) {
    const int guard = arg_width(guard_index) + (kPy313 ? 1 + g_op.caches[g_op.to_bool] : 0);
    // The NOP of a site whose slow way reports the line in the tail (at most one unit more).
    return guard + 1 + g_op.caches[g_op.pop_jump_if_false] + 1 +
           2 * (3 + g_op.caches[g_op.jump_backward]) + 3 + g_op.caches[g_op.jump_back];
}

// Whether a loop's backward jump site `c` can land quietly (fast_copy.hpp): the target's LINE
// event is never the line's, as nothing else reaches the target from another line (the
// instruction before it is of its line, no handler lands there, and every jump there from another
// line is a chosen site, whose slow way reports the line in its tail), so only a landing from a
// unit with no line reports it, and it can answer DISABLE.
bool lands_quietly(const Decoded& d, const FastSite& c, const std::vector<FastSite>& chosen) {
    const int line = d.line_at[c.end];
    const int index = d.index_at[c.end];
    if (index <= 0) return false;
    const Instr& before = d.instrs[index - 1];
    if (before.op == g_op.resume || d.line_at[before.start] != line) return false;
    for (const Handler& h : d.handlers)
        if (h.target == c.end) return false;
    for (const auto& [from, to] : d.jumps) {
        if (to != c.end || d.line_at[from] == line) continue;
        const auto taken = [from = from](const FastSite& s) { return s.jump && s.start == from; };
        if (std::none_of(chosen.begin(), chosen.end(), taken)) return false;
    }
    return true;
}

// A loop's backward jump onto a breakpoint line (fast_copy.hpp) that can take a tail at `tail_at`:
// its target's line event is the line's, unless the target is a line entry's site already.
bool choose_jump(const Decoded& d, int index, const std::vector<int>& bp_lines,
                 const std::vector<FastSite>& entries, int tail_at, FastSite& c) {
    const Instr& in = d.instrs[index];
    if (in.op != g_op.jump_backward || in.start < d.first_traceable || d.line_at[in.start] < 0)
        return false;
    const int target = in.start + in.size - in.arg;
    if (target < d.first_traceable || target >= in.start) return false;
    const int line = d.line_at[target];
    if (!std::binary_search(bp_lines.begin(), bp_lines.end(), line)) return false;
    for (const FastSite& e : entries)
        if (e.start == target) return false;
    // The JUMP_FORWARD that takes the jump's place must reach the tail from within its units.
    int width = 1;
    while (width < in.size && arg_width(tail_at - (in.start + width)) > width) ++width;
    if (arg_width(tail_at - (in.start + width)) > width) return false;
    c.line = line;
    c.start = in.start;
    c.end = target;
    c.jump = true;
    return true;
}

// The units of a loop's backward jump site's tail, in order, each with its line: the guard (none),
// the slow jump (the jump's), the hop of a site that lands quietly (none), the fast jump (the
// target's).
struct JumpTailUnits {
    int guard = 0, nop = 0, slow = 0, hop = 0, fast = 0;
};

// The tail of a loop's backward jump site `c` at `tail`, its guard the constant `guard_index`;
// fills in its slow and fast jumps (and the hop of one that lands quietly). False where the jumps
// cannot be sized.
bool jump_tail(FastSite& c, int tail, int guard_index, std::vector<CodeUnit>& t,
               JumpTailUnits& units) {
    emit(t, g_op.load_const, guard_index);
    if (kPy313) emit(t, g_op.to_bool, 0);
    const int branch_at = static_cast<int>(t.size());
    const int slow = tail + branch_at + 1 + g_op.caches[g_op.pop_jump_if_false];
    const int nop = c.reports ? 1 : 0;
    const int slow_arg = backward_arg(slow + nop, c.end, g_op.jump_backward);
    if (slow_arg < 0) return false;
    const int slow_len = nop + arg_width(slow_arg) + g_op.caches[g_op.jump_backward];
    const int hop = slow + slow_len;
    const int hop_arg = c.quiet ? backward_arg(hop, c.end) : 0;
    if (hop_arg < 0) return false;
    const int hop_len = c.quiet ? arg_width(hop_arg) + g_op.caches[g_op.jump_back] : 0;
    emit(t, g_op.pop_jump_if_false, slow_len + hop_len, 1);
    units.guard = static_cast<int>(t.size());
    if (c.reports) emit(t, g_op.nop, 0);
    emit(t, g_op.jump_backward, slow_arg);
    if (c.quiet) emit(t, g_op.jump_back, hop_arg);
    const int fast = tail + static_cast<int>(t.size());
    const int fast_arg = backward_arg(fast, c.quiet ? hop : c.end, g_op.jump_backward);
    if (fast_arg < 0) return false;
    emit(t, g_op.jump_backward, fast_arg);
    c.slow = slow;
    c.fast = c.quiet ? hop : fast;
    c.fast_end = tail + static_cast<int>(t.size());
    units.nop = nop;
    units.slow = slow_len - nop;
    units.hop = hop_len;
    units.fast = c.fast_end - fast;
    return true;
}

// The guard of site `c`, made constant `guard_index` of the copy. False with an exception set.
bool add_guard(const FastSite& c, int guard_index, PyObject* consts, FastCopy& made) {
    PyObject* guard = new_fast_copy_guard(c);
    if (!guard) return false;
    PyTuple_SET_ITEM(consts, guard_index, guard);
    made.guards.push_back(Py_NewRef(guard));
    return true;
}

// A tail of `units` at `tail` is covered by the handler of the unit it was displaced from.
void add_handler(const Decoded& d, int from, int tail, int units, std::string& handlers) {
    if (const Handler* h = handler_for(d, from)) {
        append_exception_varint(handlers, tail, true);
        append_exception_varint(handlers, units, false);
        append_exception_varint(handlers, h->target, false);
        append_exception_varint(handlers, h->depth_lasti, false);
    }
}

bool by_start(const FastSite& a, const FastSite& b) {
    return a.start < b.start;
}
}  // namespace

FastCopy::~FastCopy() {
    for (PyObject* guard : guards) {
        condition_guard_bind(guard, nullptr, nullptr);
        Py_DECREF(guard);
    }
    Py_XDECREF(original);
}

void FastCopy::bind(PyObject* copy, CodeInfo* info) const {
    for (PyObject* guard : guards) condition_guard_bind(guard, copy, info);
}

bool making_fast_copy() {
    return g_making;
}

FastCopy* fast_copy_derived(PyObject* code) {
    PyObject* consts = reinterpret_cast<PyCodeObject*>(code)->co_consts;
    FastCopy* found = nullptr;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(consts); ++i) {
        PyObject* item = PyTuple_GET_ITEM(consts, i);
        if (!is_condition_guard(item)) continue;
        if (!found) found = new FastCopy;
        found->sites.push_back(condition_guard_site(item));
    }
    if (found) std::sort(found->sites.begin(), found->sites.end(), by_start);
    return found;
}

FastCopy::At FastCopy::locate(int unit, const FastSite** site) const {
    for (const FastSite& s : sites) {
        if (s.jump) continue;
        *site = &s;
        if (unit == s.start) return At::kStart;
        if (unit == s.slow) return At::kSlow;
        if (unit == s.fast) return At::kFast;
        if (unit == s.end) return At::kEnd;
    }
    *site = nullptr;
    return At::kNone;
}

bool FastCopy::lands_quietly_at(int unit) const {
    for (const FastSite& s : sites)
        if (s.jump && s.quiet && s.end == unit) return true;
    return false;
}

bool FastCopy::in_jump_tail(int unit) const {
    for (const FastSite& s : sites)
        if (s.jump && s.slow <= unit && unit < s.fast_end && !(s.reports && unit == s.slow))
            return true;
    return false;
}

bool FastCopy::in_fast_jump(int unit) const {
    for (const FastSite& s : sites)
        if (s.jump && s.fast <= unit && unit < s.fast_end) return true;
    return false;
}

PyObject* build_fast_copy(PyObject* code, const std::vector<int>& bp_lines, PyObject* nested,
                          FastCopy** copy) {
    *copy = nullptr;
    if (!g_op.loaded || !condition_guard_allowed()) return nullptr;
    auto* co = reinterpret_cast<PyCodeObject*>(code);
    PyObject* raw = PyObject_GetAttrString(code, "co_code");
    if (!raw) return nullptr;
    Decoded d;
    if (!decode(code, raw, d)) {
        Py_DECREF(raw);
        return nullptr;
    }
    PyObject* base = nested ? nested : co->co_consts;
    const Py_ssize_t base_consts = PyTuple_GET_SIZE(base);
    // Every entry of a breakpoint line that can be displaced; the tails' sizes are counted at
    // their widest, so the jumps at the starts know how far they reach.
    std::vector<FastSite> chosen;
    int tail_at = d.n;
    for (int i = 0; i < static_cast<int>(d.instrs.size()); ++i) {
        const int line = d.line_at[d.instrs[i].start];
        if (!std::binary_search(bp_lines.begin(), bp_lines.end(), line) || !starts_line(d, i) ||
            reached_within_line(d, i))
            continue;
        FastSite c;
        c.line = line;
        if (!choose_span(d, i, arg_width(tail_at - d.instrs[i].start), c)) continue;
        chosen.push_back(c);
        tail_at += tail_units(c, static_cast<int>(base_consts + chosen.size()));
    }
    const std::vector<FastSite> entries = chosen;
    for (int i = 0; i < static_cast<int>(d.instrs.size()); ++i) {
        FastSite c;
        if (!choose_jump(d, i, bp_lines, entries, tail_at, c)) continue;
        chosen.push_back(c);
        tail_at += jump_tail_units(static_cast<int>(base_consts + chosen.size()));
    }
    for (FastSite& c : chosen) {
        if (!c.jump) continue;
        c.quiet = lands_quietly(d, c, chosen);
        c.reports = c.quiet && d.line_at[c.start] != c.line;
    }
    if (chosen.empty() && !nested) {
        Py_DECREF(raw);
        return nullptr;
    }
    // The body: the original, each span a jump to its tail padded with NOPs.
    std::vector<CodeUnit> out(d.units, d.units + d.n);
    std::vector<CodeUnit> tails;
    std::string lines(PyBytes_AS_STRING(co->co_linetable), PyBytes_GET_SIZE(co->co_linetable));
    std::string handlers(PyBytes_AS_STRING(co->co_exceptiontable),
                         PyBytes_GET_SIZE(co->co_exceptiontable));
    PyObject* consts = PyTuple_New(base_consts + static_cast<Py_ssize_t>(chosen.size()));
    for (Py_ssize_t k = 0; consts && k < base_consts; ++k)
        PyTuple_SET_ITEM(consts, k, Py_NewRef(PyTuple_GET_ITEM(base, k)));
    int line = final_line(co);
    auto* made = new FastCopy;
    bool ok = consts != nullptr;
    for (std::size_t s = 0; ok && s < chosen.size(); ++s) {
        FastSite& c = chosen[s];
        const int tail = d.n + static_cast<int>(tails.size());
        const int span = c.jump ? d.instrs[d.index_at[c.start]].size : c.end - c.start;
        // The jump counts from its own end (NOPs pad the rest of the span).
        int width = 1;
        while (width < 3 && arg_width(tail - (c.start + width)) > width) ++width;
        std::vector<CodeUnit> jump;
        emit(jump, g_op.jump_forward, tail - (c.start + width), width);
        if (static_cast<int>(jump.size()) > span) {
            ok = false;  // cannot happen: the span was chosen for a longer reach
            break;
        }
        while (static_cast<int>(jump.size()) < span) {
            CodeUnit nop{};
            nop.op = static_cast<uint8_t>(g_op.nop);
            jump.push_back(nop);
        }
        std::copy(jump.begin(), jump.end(), out.begin() + c.start);
        const int guard_index = static_cast<int>(base_consts + s);
        std::vector<CodeUnit> t;
        if (c.jump) {
            JumpTailUnits units;
            if (!jump_tail(c, tail, guard_index, t, units) ||
                !add_guard(c, guard_index, consts, *made)) {
                ok = false;
                break;
            }
            // The guard has no line, so that the slow and fast jumps are line starts whose LINE
            // events answer DISABLE once (FastCopy::in_jump_tail): a line start reached from its
            // own line never reports, and CPython would run its INSTRUMENTED_LINE at every pass.
            // A slow way that reports the line (FastSite::reports) has its line on the NOP, and
            // its jump none, so that landing reports the target's LINE once, answered DISABLE.
            append_line_entries(lines, units.guard, kNoLine);
            if (c.reports) {
                append_line_entries(lines, units.nop, c.line - line);
                append_line_entries(lines, units.slow, kNoLine);
                append_line_entries(lines, units.hop, kNoLine);
                append_line_entries(lines, units.fast, 0);
            } else {
                append_line_entries(lines, units.slow, d.line_at[c.start] - line);
                append_line_entries(lines, units.hop, kNoLine);
                append_line_entries(lines, units.fast, c.line - d.line_at[c.start]);
            }
            line = c.line;
            if (c.reports) {
                // The NOP's event is the target's, under the target's handler (a `continue` in a
                // `try` jumps from within it; the header is outside).
                const int after = units.guard + units.nop;
                add_handler(d, c.start, tail, units.guard, handlers);
                add_handler(d, c.end, tail + units.guard, units.nop, handlers);
                add_handler(d, c.start, tail + after, static_cast<int>(t.size()) - after, handlers);
            } else {
                add_handler(d, c.start, tail, static_cast<int>(t.size()), handlers);
            }
            tails.insert(tails.end(), t.begin(), t.end());
            made->sites.push_back(c);
            continue;
        }
        emit(t, g_op.load_const, guard_index);
        if (kPy313) emit(t, g_op.to_bool, 0);
        // The slow replica's length decides the branch; its own jump back is sized first.
        const int branch_at = static_cast<int>(t.size());
        const int slow_guess = span + 3 + g_op.caches[g_op.jump_back];
        const int branch_width = arg_width(slow_guess);
        const int slow = tail + branch_at + branch_width + g_op.caches[g_op.pop_jump_if_false];
        const int slow_back = backward_arg(slow + span, c.end);
        const int slow_len = span + arg_width(slow_back) + g_op.caches[g_op.jump_back];
        emit(t, g_op.pop_jump_if_false, slow_len, branch_width);
        const int guard_units = static_cast<int>(t.size());
        t.insert(t.end(), d.units + c.start, d.units + c.end);
        emit(t, g_op.jump_back, slow_back);
        const int fast = tail + static_cast<int>(t.size());
        const int fast_back = backward_arg(fast + span, c.end);
        t.insert(t.end(), d.units + c.start, d.units + c.end);
        emit(t, g_op.jump_back, fast_back);
        if (slow_back < 0 || fast_back < 0 || slow != tail + guard_units) {
            ok = false;
            break;
        }
        c.slow = slow;
        c.fast = fast;
        if (!add_guard(c, guard_index, consts, *made)) {
            ok = false;
            break;
        }
        // The jumps back have no line: `end` is now a jump target, so a line start where the
        // engine's event must be taken out, which a jump from the same line would hide.
        const int back_len = slow_len - span;
        append_line_entries(lines, guard_units, kNoLine);
        append_line_entries(lines, span, c.line - line);
        append_line_entries(lines, back_len, kNoLine);
        append_line_entries(lines, span, 0);
        append_line_entries(lines, static_cast<int>(t.size()) - guard_units - slow_len - span,
                            kNoLine);
        line = c.line;
        add_handler(d, c.start, tail, static_cast<int>(t.size()), handlers);
        tails.insert(tails.end(), t.begin(), t.end());
        made->sites.push_back(c);
    }
    std::sort(made->sites.begin(), made->sites.end(), by_start);
    Py_DECREF(raw);
    PyObject* result = nullptr;
    if (ok) {
        out.insert(out.end(), tails.begin(), tails.end());
        PyObject* replace = PyObject_GetAttrString(code, "replace");
        PyObject* kwargs = Py_BuildValue(
            "{s:N,s:O,s:N,s:N,s:i}", "co_code",
            PyBytes_FromStringAndSize(reinterpret_cast<const char*>(out.data()),
                                      static_cast<Py_ssize_t>(out.size() * sizeof(CodeUnit))),
            "co_consts", consts, "co_linetable",
            PyBytes_FromStringAndSize(lines.data(), static_cast<Py_ssize_t>(lines.size())),
            "co_exceptiontable",
            PyBytes_FromStringAndSize(handlers.data(), static_cast<Py_ssize_t>(handlers.size())),
            "co_stacksize", co->co_stacksize + 1);
        PyObject* args = replace && kwargs ? PyTuple_New(0) : nullptr;
        g_making = true;
        result = args ? PyObject_Call(replace, args, kwargs) : nullptr;
        g_making = false;
        Py_XDECREF(args);
        Py_XDECREF(kwargs);
        Py_XDECREF(replace);
    }
    Py_XDECREF(consts);
    if (!result) {
        delete made;
        return nullptr;
    }
    made->original = Py_NewRef(code);
    *copy = made;
    return result;
}

}  // namespace dpdb::engine

#endif
