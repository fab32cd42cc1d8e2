// CPython 3.9-3.11: the PEP 523 gate. Any trace function makes these interpreters several times
// slower on call-heavy code, so while only breakpoints are armed (nobody steps) a frame evaluator
// gates the C tracer (tracer.cpp). The gate gives a
// starting or resuming frame whose code holds a breakpoint a copy of that code with the check
// compiled in (patch.hpp), so that it runs untraced; a thread is traced only while a frame runs
// that could not switch to such a copy (it was already running when the breakpoint was set, or
// its code cannot be patched safely). Stepping falls back to tracing every thread, as bdb does.
//
// The check is a builtin called from the copy when a breakpoint line starts. It cannot stop
// there (a trace function may jump or read the locals only between two instructions), so it
// sets a trap: it turns on opcode events for its frame, and on the next instruction the tracer
// pops the check's result, moves the frame back to the start of the line (for a check compiled in
// at a backward jump, to where that jump goes) and delivers the line event bdb would have received.
#include <Python.h>

#if PY_VERSION_HEX < 0x030C0000

#include <algorithm>

#include "engine/condition.hpp"
#include "engine/engine.hpp"
#include "engine/frame_access.hpp"
#include "engine/legacy.hpp"
#include "engine/patch.hpp"

namespace dpdb::engine {

bool g_gate_allowed = true;
bool g_patch_allowed = true;
bool g_gate = false;
std::uint64_t g_reconfigured = 0;
PyObject* g_checker = nullptr;
std::vector<PyObject*> g_live_patches;
thread_local SeenLine g_seen;

namespace {

bool g_gate_installed = false;
std::uint64_t g_live_generation = 0;

// A check that found its line due: the next instruction of `frame` delivers the line event.
struct Trap {
    PyFrameObject* frame = nullptr;  // borrowed: the frame is running
    const Site* site = nullptr;
    char opcodes = 0;  // the frame's f_trace_opcodes before the trap
    bool was_traced = false;
    std::uint64_t reconfigured = 0;
};
thread_local Trap g_trap;

}  // namespace

// The lines of `code` that hold a breakpoint this generation, sorted.
int breakpoint_lines(PyObject* code, const CodeInfo* info, std::vector<int>& lines) {
    if (code_lines(code, lines) < 0) return -1;
    lines.erase(std::remove_if(lines.begin(), lines.end(),
                               [info](int line) { return !info->is_bp_line(line); }),
                lines.end());
    return 0;
}

// A copy of `code` with checks at `lines` (see build_patched), whose CodeInfo (*info) owns its
// description; null without an exception set when it cannot be made safely.
PyObject* new_patched_copy(PyObject* code, const std::vector<int>& lines, bool grow_stack,
                           CodeInfo** info) {
    Patch* patch = nullptr;
    PyObject* patched = build_patched(code, lines, &patch, grow_stack);
    if (!patched) return nullptr;
    *info = code_info(patched);
    if (!*info) {
        delete patch;
        Py_DECREF(patched);
        return nullptr;
    }
    (*info)->patch.reset(patch);
    ++state().patched;
    return patched;
}

// Fills the per-generation fields of `info` (see CodeInfo): whether frames running `code` need
// the tracer, and for an original holding breakpoints, its patched copy when one can be made.
int prepare(PyObject* code, CodeInfo* info) {
    if (info->prepared) return 0;
#if PY_VERSION_HEX >= 0x030B0000
    if (info->in_bp_file && !info->patch && adopt_derived(code, info) < 0) return -1;
#endif
    State& st = state();
    if (g_live_generation != st.generation) {
        for (PyObject* p : g_live_patches) Py_DECREF(p);
        g_live_patches.clear();
        g_live_generation = st.generation;
    }
    info->prepared = true;
    info->needs_trace = info->in_bp_file && info->all_lines;
    if (!info->in_bp_file || info->all_lines) return 0;
    if (const Patch* patch = info->patch.get()) {
        // A copy made for an earlier generation covers the lines it has checks for.
        for (int line : patch->lines) {
            if (!info->is_bp_line(line)) continue;
            bool checked = false;
            for (const Site& s : patch->sites) checked |= s.line == line;
            info->needs_trace |= !checked;
        }
        return 0;
    }
    std::vector<int> lines;
    if (breakpoint_lines(code, info, lines) < 0) return -1;
    if (lines.empty()) return 0;
    info->needs_trace = true;
    if (!g_patch_allowed) return 0;
    CodeInfo* pinfo = nullptr;
    PyObject* patched = new_patched_copy(code, lines, false, &pinfo);
    if (!patched) return PyErr_Occurred() ? -1 : 0;
    g_live_patches.push_back(patched);
    if (prepare(patched, pinfo) < 0) return -1;
    info->patched = patched;
    info->patched_info = pinfo;
    return 0;
}

namespace {

// A frame may change code only outside the spans the patched code displaces.
bool can_switch(int lasti, const CodeInfo* from, const CodeInfo* to) {
    if (lasti < 0) return true;
    if (from->patch && (from->patch->in_tail(lasti) || from->patch->in_span(lasti))) return false;
    return !(to->patch && to->patch->in_span(lasti));
}

// Gives a frame about to start or resume this generation's version of its code. Returns the
// CodeInfo of the code it runs, null with an exception set on failure.
CodeInfo* switch_code(EvalFrame f, CodeInfo* info) {
    PyObject* code = eval_code(f);
    if (prepare(code, info) < 0) return nullptr;
    if (!g_patch_allowed) return info;
    PyObject* base = info->patch ? info->patch->original : code;
    CodeInfo* base_info = base == code ? info : code_info(base);
    if (!base_info || prepare(base, base_info) < 0) return nullptr;
    if (base_info->patched_info == info) return info;  // already this generation's copy
    PyObject* wanted = base_info->patched ? base_info->patched : base;
    CodeInfo* wanted_info = base_info->patched ? base_info->patched_info : base_info;
    if (wanted == code || !can_switch(lasti_units(f), info, wanted_info)) return info;
    set_code(f, wanted);
    return wanted_info;
}

// A finished frame goes back to its original code, so that what outlives it (f_code of a frame
// kept by a traceback) is the user's code; not where the patched code raised from a tail. On
// 3.9/3.10 this also files the frame object as the original's zombie frame, for reuse by its next
// call; on 3.11 only a frame object can outlive the frame.
void restore_code(EvalFrame f, const CodeInfo* info) {
    const Patch* patch = info->patch.get();
    if (!patch || is_generator_code(patch->original)) return;
#if PY_VERSION_HEX >= 0x030B0000
    if (!eval_frame_object(f)) return;
#endif
    int lasti = lasti_units(f);
    if (lasti >= 0 && (patch->in_tail(lasti) || patch->in_span(lasti))) return;
    set_code(f, patch->original);
}

// Everything the evaluator may do for a frame; gate_eval below keeps the common case out of it.
// `info` is the code's CodeInfo when gate_eval already knows it.
[[gnu::noinline]] PyObject* gate_eval_full(PyThreadState* ts, EvalFrame f, int throwflag,
                                           CodeInfo* info) {
    if (!g_gate || (ts->c_tracefunc && ts->c_tracefunc != tracer) || t_switching_trace)
        return _PyEval_EvalFrameDefault(ts, f, throwflag);
#if PY_VERSION_HEX >= 0x030B0000
    if (g_rescan_pending && (++g_rescan_ticks & 0xFFF) == 0 && !throwflag && !ts->tracing &&
        !g_trap.frame && !PyErr_Occurred())
        maybe_rescan(eval_code(f));
#endif
    if (!info && !(info = code_info(eval_code(f)))) return nullptr;
    if (info->in_bp_file && !(info = switch_code(f, info))) return nullptr;
#if PY_VERSION_HEX >= 0x030B0000
    // Another thread may have turned swap mode on while this one ran Python code above (the
    // canonic filename) before its frame was on its stack, where the scan would have seen it.
    if (g_swap && !swap_frame_ok(eval_code(f))) swap_to_gate();
#endif
    PyFrameObject* fo = eval_frame_object(f);
    bool want = info->needs_trace || (fo && frame_trace(fo) && !info->patch);
    bool on = ts->c_tracefunc == tracer;
    if (want != on && set_trace(ts, want) < 0) return nullptr;
    const std::uint64_t reconfigured = g_reconfigured;
    PyObject* result = _PyEval_EvalFrameDefault(ts, f, throwflag);
    if (want != on && g_gate && (ts->c_tracefunc == tracer) != on) {
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        // The caller goes on as it was, unless breakpoints changed while this frame ran (it
        // stopped, and the user set one): a caller already running may hold one now, and must
        // then stay traced, as the reconfiguration decided.
        bool back = on;
        if (g_reconfigured != reconfigured && !on && needs_tracing(ts, &back) < 0) {
            PyErr_Clear();
            back = true;  // traced, the side that misses nothing
        }
        if (back == on && set_trace(ts, on) < 0) PyErr_Clear();
        PyErr_Restore(type, value, tb);
    }
    restore_code(f, info);
    return result;
}

// Runs at every call and resume of every frame while the gate is installed, so its common case
// (code that is no patched copy and has none, already classified this generation, no trace
// function wanted on this frame or on the thread) is a handful of loads before the default
// evaluator, which it calls as a tail call: on 3.9 a breakpoint in another file cost call-heavy
// code ~110 instructions a call through gate_eval_full, ~15 this way. That holds for the code of
// a breakpoint's file whose lines hold none, once prepare() found no copy to switch to (on 3.9 an
// unreached breakpoint cost the rest of its file those ~110 a call: richards 1.06x, issue 31).
PyObject* gate_eval(PyThreadState* ts, EvalFrame f, int throwflag) {
#if PY_VERSION_HEX >= 0x030B0000
    const bool swap_work = g_swap || g_rescan_pending;
#else
    constexpr bool swap_work = false;
#endif
    CodeInfo* info = swap_work ? nullptr : known_code_info(eval_code(f));
    if (info && (!info->in_bp_file || (info->prepared && !info->patched)) && !info->needs_trace &&
        !info->patch && ts->c_tracefunc != tracer) {
        PyFrameObject* fo = eval_frame_object(f);
        if (!fo || !frame_trace(fo)) return _PyEval_EvalFrameDefault(ts, f, throwflag);
    }
    return gate_eval_full(ts, f, throwflag, info);
}

// The builtin the patched code calls at the start of a breakpoint line (see the file comment).
PyObject* check_breakpoint(PyObject*, PyObject*) {
    PyThreadState* ts = PyThreadState_Get();
    // As for a line event: nothing inside a trace function, nor under somebody else's tracer.
    if (!state().armed || ts->tracing || t_switching_trace ||
        (ts->c_tracefunc && ts->c_tracefunc != tracer))
        Py_RETURN_NONE;
#if PY_VERSION_HEX >= 0x030B0000
    // The caller as the interpreter runs it: its frame object is made for a trap only, not at
    // every check of a call-heavy function.
    EvalFrame running = ts->cframe->current_frame;
    if (!running) Py_RETURN_NONE;
    PyObject* code = eval_code(running);
#else
    PyFrameObject* running = PyEval_GetFrame();
    if (!running) Py_RETURN_NONE;
    PyObject* code = borrowed_code(running);
#endif
    CodeInfo* info = code_info(code);
    if (!info) return nullptr;
    const Site* site = info->patch ? info->patch->site_in_tail(lasti_units(running)) : nullptr;
    if (!site) Py_RETURN_NONE;
    PyFrameObject* known = eval_frame_object(running);  // 3.11: null until something made it
    if (!site->is_jump() && known && g_seen.frame == known && g_seen.unit == site->start) {
        g_seen = {};
        Py_RETURN_NONE;
    }
    // A trap still set here was never sprung (an exception, e.g. from a signal handler, left the
    // check before its next instruction): this one replaces it.
    const bool traced = ts->c_tracefunc == tracer;
    if (site->is_jump() && traced) {
        // The tracer ignores the line event the jump back to the target causes (it is a resume
        // point): the check delivers the one the original jump causes, as the tracer would.
        PyFrameObject* frame = PyEval_GetFrame();
        if (!frame || !frame_trace_lines(frame) ||
            (!state().any_nontrivial && !frame_trace(frame) && !info->is_bp_line(site->line)))
            Py_RETURN_NONE;
    } else if (!info->is_bp_line(site->line)) {
        Py_RETURN_NONE;
    } else if (!state().any_nontrivial) {
        // Nobody steps, so bdb would look only for a breakpoint: false conditions need no trap.
#if PY_VERSION_HEX >= 0x030B0000
        const bool optimized = reinterpret_cast<PyCodeObject*>(code)->co_flags & CO_OPTIMIZED;
        if (optimized ? conditions_false_running(code, info, site->line)
                      : conditions_false(PyEval_GetFrame(), code, info, site->line))
            return none_unless_raised();
#else
        if (conditions_false(running, code, info, site->line)) return none_unless_raised();
#endif
    }
    PyFrameObject* frame = PyEval_GetFrame();
    if (!frame) Py_RETURN_NONE;
    if (!traced && set_trace(ts, true) < 0) return nullptr;
    g_trap = {frame, site, frame_trace_opcodes(frame), traced, g_reconfigured};
    frame_trace_opcodes(frame) = 1;
    Py_RETURN_NONE;
}

PyMethodDef check_def = {"dpdb_check_breakpoint", check_breakpoint, METH_NOARGS, nullptr};

}  // namespace

int spring_trap(PyFrameObject* frame) {
    if (g_trap.frame != frame) return 0;
    Trap trap = g_trap;
    g_trap = {};
    frame_trace_opcodes(frame) = trap.opcodes;
    PyObject** top = stack_top(frame);
    if (lasti_units(frame) != trap.site->after_call || !top || *top != Py_None) return 0;
    drop_stack_top(frame);
    Py_DECREF(Py_None);
    set_lasti_units(frame, trap.site->resume);  // a jump site's frame resumes as if it jumped
    ++state().trapped;
#if PY_VERSION_HEX >= 0x030B0000
    // 3.11 lets a trace function jump (f_lineno) only from a line event.
    PyThreadState* ts = PyThreadState_Get();
    int what = ts->tracing_what;
    ts->tracing_what = PyTrace_LINE;
#endif
    int rc = handle(frame, borrowed_code(frame), Event::kLine, Py_None, trap.site->line);
#if PY_VERSION_HEX >= 0x030B0000
    ts->tracing_what = what;
#endif
    g_seen = {frame, lasti_units(frame)};
    if (rc == 0 && g_gate && !trap.was_traced && g_reconfigured == trap.reconfigured)
        rc = set_trace(PyThreadState_Get(), false);
    return rc;
}

void install_gate(bool on) {
    if (on == g_gate_installed) return;
    PyInterpreterState* interp = PyThreadState_Get()->interp;
    _PyInterpreterState_SetEvalFrameFunc(interp, on ? gate_eval : _PyEval_EvalFrameDefault);
    g_gate_installed = on;
}

PyObject* backend_checker() {
    if (!g_checker) {
        PyObject* module = PyUnicode_FromString("dpdb._engine_native");
        if (!module) return nullptr;
        g_checker = PyCFunction_NewEx(&check_def, nullptr, module);
        Py_DECREF(module);
    }
    return g_checker;
}

PyObject* backend_user_code(PyObject* code) {
#if PY_VERSION_HEX >= 0x030B0000
    return original_of(code);
#else
    return code;  // the gate runs its copies from its own frames; functions keep the user's code
#endif
}

}  // namespace dpdb::engine

#endif
