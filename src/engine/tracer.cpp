// CPython 3.9-3.11: the engine as a C trace function (PyEval_SetTrace semantics), installed only
// while something is armed. Calls are answered from the per-code cache; frames that bdb would not
// trace get f_trace_lines = 0, so the interpreter stops reporting their lines.
//
// Any trace function makes these interpreters several times slower on call-heavy code, so while
// only breakpoints are armed (nobody steps) a PEP 523 frame evaluator gates it. The gate gives a
// starting or resuming frame whose code holds a breakpoint a copy of that code with the check
// compiled in (patch.hpp), so that it runs untraced; a thread is traced only while a frame runs
// that could not switch to such a copy (it was already running when the breakpoint was set, or
// its code cannot be patched safely). Stepping falls back to tracing every thread, as bdb does.
//
// The check is a builtin called from the copy when a breakpoint line starts. It cannot stop
// there (a trace function may jump or read the locals only between two instructions), so it
// sets a trap: it turns on opcode events for its frame, and on the next instruction the tracer
// pops the check's result, moves the frame back to the start of the line and delivers the line
// event bdb would have received.
#include <Python.h>

#if PY_VERSION_HEX < 0x030C0000

#include <algorithm>
#include <chrono>
#include <cstring>
#include <unordered_map>

#include "engine/condition.hpp"
#include "engine/engine.hpp"
#include "engine/frame_access.hpp"
#include "engine/patch.hpp"

namespace dpdb::engine {
namespace {

#if PY_VERSION_HEX >= 0x030B0000
// 3.11's private _PyInterpreterFrame, up to its locals and stack.
struct InterpreterFrame {
    PyObject* f_func;
    PyObject* f_globals;
    PyObject* f_builtins;
    PyObject* f_locals;
    PyCodeObject* f_code;
    PyFrameObject* frame_obj;
    InterpreterFrame* previous;
    _Py_CODEUNIT* prev_instr;
    int stacktop;
    bool is_entry;
    char owner;
    PyObject* localsplus[1];
};
using EvalFrame = struct _PyInterpreterFrame*;
InterpreterFrame* iframe(EvalFrame f) {
    return reinterpret_cast<InterpreterFrame*>(f);
}
InterpreterFrame* iframe(PyFrameObject* f) {
    return static_cast<InterpreterFrame*>(head(f)->f_frame);
}
PyObject* eval_code(EvalFrame f) {
    return reinterpret_cast<PyObject*>(iframe(f)->f_code);
}
PyFrameObject* eval_frame_object(EvalFrame f) {
    return iframe(f)->frame_obj;
}
template <typename F>
int lasti_units(F f) {
    InterpreterFrame* i = iframe(f);
    return static_cast<int>(i->prev_instr - _PyCode_CODE(i->f_code));
}
void set_lasti_units(PyFrameObject* f, int unit) {
    InterpreterFrame* i = iframe(f);
    i->prev_instr = _PyCode_CODE(i->f_code) + unit;
}
void set_code(EvalFrame f, PyObject* code) {
    InterpreterFrame* i = iframe(f);
    auto* to = reinterpret_cast<PyCodeObject*>(code);
    i->prev_instr = _PyCode_CODE(to) + (i->prev_instr - _PyCode_CODE(i->f_code));
    Py_INCREF(to);
    Py_SETREF(i->f_code, to);
}
// The value on top of the frame's stack, as a trace function sees it.
PyObject** stack_top(PyFrameObject* f) {
    InterpreterFrame* i = iframe(f);
    return i->stacktop > i->f_code->co_nlocalsplus ? &i->localsplus[i->stacktop - 1] : nullptr;
}
void drop_stack_top(PyFrameObject* f) {
    --iframe(f)->stacktop;
}
#else
using EvalFrame = PyFrameObject*;
PyObject* eval_code(EvalFrame f) {
    return reinterpret_cast<PyObject*>(f->f_code);
}
PyFrameObject* eval_frame_object(EvalFrame f) {
    return f;
}
// f_lasti counts bytes on 3.9 and code units on 3.10.
constexpr int kLastiScale = PY_VERSION_HEX < 0x030A0000 ? 2 : 1;
int lasti_units(PyFrameObject* f) {
    return f->f_lasti < 0 ? -1 : f->f_lasti / kLastiScale;
}
void set_lasti_units(PyFrameObject* f, int unit) {
    f->f_lasti = unit * kLastiScale;
}
void set_code(EvalFrame f, PyObject* code) {
    Py_INCREF(code);
    Py_SETREF(f->f_code, reinterpret_cast<PyCodeObject*>(code));
}
#if PY_VERSION_HEX < 0x030A0000
PyObject** stack_top(PyFrameObject* f) {
    return f->f_stacktop && f->f_stacktop > f->f_valuestack ? f->f_stacktop - 1 : nullptr;
}
void drop_stack_top(PyFrameObject* f) {
    --f->f_stacktop;
}
#else
PyObject** stack_top(PyFrameObject* f) {
    return f->f_stackdepth > 0 ? &f->f_valuestack[f->f_stackdepth - 1] : nullptr;
}
void drop_stack_top(PyFrameObject* f) {
    --f->f_stackdepth;
}
#endif
#endif

bool is_generator_code(PyObject* code) {
    const int flags = CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR;
    return (reinterpret_cast<PyCodeObject*>(code)->co_flags & flags) != 0;
}

bool g_gate_allowed = true;   // the strategy may forbid PEP 523
bool g_patch_allowed = true;  // ... or the breakpoint checks in the bytecode
bool g_gate = false;          // the gate decides which frames run traced
bool g_gate_installed = false;
std::uint64_t g_reconfigured = 0;
PyObject* g_checker = nullptr;  // the builtin the patched code calls

// This generation's patched copies (strong; each holds its original).
std::vector<PyObject*> g_live_patches;
std::uint64_t g_live_generation = 0;

// The line event at a check's line start that the engine has already handled for a frame (the
// tracer saw the line, or a trap delivered it): the check that follows must not repeat it.
struct SeenLine {
    PyFrameObject* frame = nullptr;  // compared only
    int unit = -1;
};
thread_local SeenLine g_seen;

// A check that found its line due: the next instruction of `frame` delivers the line event.
struct Trap {
    PyFrameObject* frame = nullptr;  // borrowed: the frame is running
    const Site* site = nullptr;
    char opcodes = 0;  // the frame's f_trace_opcodes before the trap
    bool was_traced = false;
    std::uint64_t reconfigured = 0;
};
thread_local Trap g_trap;
PyObject* g_thread_hook = nullptr;  // builtin given to threading.settrace
PyObject* g_threading = nullptr;
bool g_hook_installed = false;

PyObject* borrowed_code(PyFrameObject* frame) {
#if PY_VERSION_HEX >= 0x030B0000
    PyObject* code = reinterpret_cast<PyObject*>(PyFrame_GetCode(frame));
    Py_DECREF(code);  // the frame keeps it alive
    return code;
#else
    return reinterpret_cast<PyObject*>(frame->f_code);
#endif
}

int set_trace(PyThreadState* ts, bool on);
int spring_trap(PyFrameObject* frame);

// _PyEval_SetTrace raises the "sys.settrace" audit event before it changes anything, and a
// Python audit hook then runs on this thread with the engine half-way through a switch: its
// frames enter the gate, which would switch the trace function again (3.9: without end, until
// the C stack overflows; 3.10/3.11: CPython's re-entry check raises in the hook). While a thread
// switches, its nested frames run as they are, untouched by the gate and the tracer. Per OS
// thread, because a hook may release the GIL and let another thread switch meanwhile.
thread_local bool t_switching_trace = false;
#if PY_VERSION_HEX >= 0x030B0000
int adopt_derived(PyObject* code, CodeInfo* info);
#endif

int tracer(PyObject*, PyFrameObject* frame, int what, PyObject* arg) {
    State& st = state();
    if (!st.armed || t_switching_trace) return 0;
    switch (what) {
        case PyTrace_CALL: {
            PyObject* code = borrowed_code(frame);
            CodeInfo* info = code_info(code);
            if (!info) return -1;
            if (st.any_calls || st.any_nontrivial) {
                if (handle(frame, code, Event::kCall, arg, 0) < 0) return -1;
            }
            frame_trace_lines(frame) = frame_trace(frame) || info->in_bp_file;
            return 0;
        }
        case PyTrace_LINE: {
            PyObject* code = borrowed_code(frame);
            CodeInfo* info = code_info(code);
            if (!info) return -1;
#if PY_VERSION_HEX >= 0x030B0000
            if (info->in_bp_file && !info->patch && adopt_derived(code, info) < 0) return -1;
#endif
            const Patch* patch = info->patch.get();
            if (patch) {
                // The jump into a tail and back out of it: the original code has neither.
                int unit = lasti_units(frame);
                if (patch->in_tail(unit) || patch->is_resume_point(unit)) return 0;
            }
            int line = PyFrame_GetLineNumber(frame);
            if (!st.any_nontrivial && !frame_trace(frame) && !info->is_bp_line(line)) return 0;
            int rc = handle(frame, code, Event::kLine, Py_None, line);
            if (patch) g_seen = {frame, lasti_units(frame)};
            return rc;
        }
        case PyTrace_OPCODE:
            return spring_trap(frame);
        case PyTrace_RETURN:
            if (!st.any_nontrivial) return 0;
            return handle(frame, borrowed_code(frame), Event::kReturn, arg, 0);
        case PyTrace_EXCEPTION:
            if (!st.any_nontrivial) return 0;
            return handle(frame, borrowed_code(frame), Event::kException, arg, 0);
        default:
            return 0;
    }
}

int set_trace(PyThreadState* ts, bool on) {
    const bool outer = t_switching_trace;
    t_switching_trace = true;
    int rc = _PyEval_SetTrace(ts, on ? tracer : nullptr, nullptr);
    t_switching_trace = outer;
    return rc;
}

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

#if PY_VERSION_HEX >= 0x030B0000
// Swap mode (3.11), defined below with install_gate.
bool g_swap = false;
bool g_rescan_pending = false;
std::uint32_t g_rescan_ticks = 0;
void maybe_rescan(PyObject* pending);
bool swap_frame_ok(PyObject* code);
void swap_to_gate();
#endif

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
    PyObject* result = _PyEval_EvalFrameDefault(ts, f, throwflag);
    if (want != on && g_gate && (ts->c_tracefunc == tracer) != on) {
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        if (set_trace(ts, on) < 0) PyErr_Clear();
        PyErr_Restore(type, value, tb);
    }
    restore_code(f, info);
    return result;
}

// Runs at every call and resume of every frame while the gate is installed, so its common case
// (code of a file without breakpoints that is no patched copy, already classified this
// generation, no trace function wanted on this frame or on the thread) is a handful of loads before
// the default evaluator, which it calls as a tail call: on 3.9 a breakpoint in another file cost
// call-heavy code ~110 instructions a call through gate_eval_full, ~15 this way.
PyObject* gate_eval(PyThreadState* ts, EvalFrame f, int throwflag) {
#if PY_VERSION_HEX >= 0x030B0000
    const bool swap_work = g_swap || g_rescan_pending;
#else
    constexpr bool swap_work = false;
#endif
    CodeInfo* info = swap_work ? nullptr : known_code_info(eval_code(f));
    if (info && !info->in_bp_file && !info->needs_trace && !info->patch &&
        ts->c_tracefunc != tracer) {
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
    PyFrameObject* frame = PyEval_GetFrame();
    if (!frame) Py_RETURN_NONE;
    CodeInfo* info = code_info(borrowed_code(frame));
    if (!info) return nullptr;
    const Site* site = info->patch ? info->patch->site_in_tail(lasti_units(frame)) : nullptr;
    if (!site) Py_RETURN_NONE;
    if (g_seen.frame == frame && g_seen.unit == site->start) {
        g_seen = {};
        Py_RETURN_NONE;
    }
    // A trap still set here was never sprung (an exception, e.g. from a signal handler, left the
    // check before its next instruction): this one replaces it.
    if (!info->is_bp_line(site->line)) Py_RETURN_NONE;
    // Nobody steps, so bdb would look only for a breakpoint: false conditions need no trap.
    if (!state().any_nontrivial && conditions_false(frame, borrowed_code(frame), site->line))
        Py_RETURN_NONE;
    bool traced = ts->c_tracefunc == tracer;
    if (!traced && set_trace(ts, true) < 0) return nullptr;
    g_trap = {frame, site, frame_trace_opcodes(frame), traced, g_reconfigured};
    frame_trace_opcodes(frame) = 1;
    Py_RETURN_NONE;
}

PyMethodDef check_def = {"dpdb_check_breakpoint", check_breakpoint, METH_NOARGS, nullptr};

int spring_trap(PyFrameObject* frame) {
    if (g_trap.frame != frame) return 0;
    Trap trap = g_trap;
    g_trap = {};
    frame_trace_opcodes(frame) = trap.opcodes;
    PyObject** top = stack_top(frame);
    if (lasti_units(frame) != trap.site->after_call || !top || *top != Py_None) return 0;
    drop_stack_top(frame);
    Py_DECREF(Py_None);
    set_lasti_units(frame, trap.site->start);
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

#if PY_VERSION_HEX >= 0x030B0000
// ---- swap mode ----
//
// On 3.11 any PEP 523 evaluator costs the interpreter its inlined Python-to-Python calls, so
// while only breakpoints are armed the gate is avoided when that is safe: every function whose
// code (or a code object nested in its co_consts) holds a breakpoint gets, through its __code__,
// a copy of that tree whose breakpoint lines have their checks compiled in, and no evaluator is
// installed. That is safe only while no frame can still run, or make functions from, the
// original code: no live frame or suspended generator runs an original tree that needs patching,
// and new code objects of breakpoint files (exec, compile, code.__new__: an audit hook) put the
// gate back at once; it hands the work back to swap mode after a rescan.

bool g_swap_allowed = true;
bool g_audit_hook = false;
// Our own code.replace and __code__ writes raise audit events; per thread, as scans in two
// threads may interleave wherever one runs Python code.
thread_local bool g_in_swap_code = false;
bool g_functions_swapped = false;  // some function may hold a copy: a restore has work to do
// Generation of the breakpoint-only mode (gate or swap) in force, 0 outside it.
std::uint64_t g_bp_mode_generation = 0;
std::int64_t g_rescan_due = 0;  // steady clock, ns
std::int64_t g_rescan_delay = 0;
constexpr std::int64_t kFirstRescanDelay = 200'000'000;
constexpr std::int64_t kLongestRescanDelay = 5'000'000'000;

// Every code object swap mode made (a copy with patched children in co_consts, or the patched
// copy of one) -> the user's original. Strong both ways, so that functions holding a copy can
// be given their original back after any change.
std::unordered_map<PyObject*, PyObject*> g_origin;
std::vector<PyObject*> g_origin_order;  // insertion order: children before their parents
// This generation: original -> the code its functions should run (the original itself when
// nothing in its tree holds a breakpoint), or null when some code of its tree holds a
// breakpoint that cannot be compiled in (only the gate and the tracer can serve it). Strong.
std::unordered_map<PyObject*, PyObject*> g_want;
std::uint64_t g_want_generation = 0;

std::int64_t steady_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

void clear_want() {
    std::unordered_map<PyObject*, PyObject*> old;
    old.swap(g_want);
    for (auto& [orig, want] : old) {
        Py_DECREF(orig);
        Py_XDECREF(want);
    }
}

void remember_origin(PyObject* copy, PyObject* orig) {
    if (copy == orig || g_origin.count(copy)) return;
    Py_INCREF(copy);
    Py_INCREF(orig);
    g_origin[copy] = orig;
    g_origin_order.push_back(copy);
}

// The CodeInfo attached to `code`, of whatever generation, or null; never an exception.
CodeInfo* stored_info(PyObject* code) {
    void* extra = nullptr;
    if (_PyCode_GetExtra(code, state().extra_index, &extra) < 0) {
        PyErr_Clear();
        return nullptr;
    }
    return static_cast<CodeInfo*>(extra);
}

// The user's code behind `code`: a copy swap mode made, or a patched copy the gate made for a
// frame, lead back to it.
PyObject* original_of(PyObject* code) {
    auto it = g_origin.find(code);
    if (it != g_origin.end()) return it->second;
    const CodeInfo* info = stored_info(code);
    if (!info || !info->patch) return code;
    PyObject* base = info->patch->original;
    it = g_origin.find(base);
    return it != g_origin.end() ? it->second : base;
}

// The CodeInfo of `code` if it is current for this generation, without computing anything.
CodeInfo* peek_info(PyObject* code) {
    CodeInfo* info = stored_info(code);
    return info && info->generation == state().generation ? info : nullptr;
}

PyObject* replace_consts(PyObject* code, PyObject* consts) {
    PyObject* kwargs = Py_BuildValue("{sO}", "co_consts", consts);
    PyObject* copy = kwargs ? replace_code(code, kwargs) : nullptr;
    Py_XDECREF(kwargs);
    return copy;
}

// What functions of the original `orig` should run this generation (see g_want), as a new
// reference (Python code run meanwhile may set breakpoints, which empties g_want); *found is
// false when that is not known yet and `compute` is false. Returns -1 with an exception set.
int want_of(PyObject* orig, bool compute, PyObject** want, bool* found) {
    State& st = state();
    if (g_want_generation != st.generation) {
        clear_want();
        g_want_generation = st.generation;
    }
    auto it = g_want.find(orig);
    *found = it != g_want.end();
    if (*found) {
        *want = it->second;
        Py_XINCREF(*want);
        return 0;
    }
    *want = nullptr;
    if (!compute) return 0;
    // Held to the end: another thread may drop the function's reference while this one runs
    // Python code (canonic file names, audit hooks), and may change breakpoints, which makes
    // what is computed here stale.
    const std::uint64_t generation = st.generation;
    Py_INCREF(orig);
    PyObject* consts = reinterpret_cast<PyCodeObject*>(orig)->co_consts;
    const Py_ssize_t n = PyTuple_GET_SIZE(consts);
    PyObject* fresh = nullptr;  // co_consts with the children's copies
    bool patchable = true;
    for (Py_ssize_t i = 0; i < n && patchable; ++i) {
        PyObject* child = PyTuple_GET_ITEM(consts, i);
        if (!PyCode_Check(child)) continue;
        PyObject* child_want;
        bool child_found;
        if (want_of(child, true, &child_want, &child_found) < 0) {
            Py_XDECREF(fresh);
            Py_DECREF(orig);
            return -1;
        }
        if (!child_found) {  // the breakpoints changed meanwhile
            Py_XDECREF(fresh);
            Py_DECREF(orig);
            *found = false;
            return 0;
        }
        if (!child_want) patchable = false;
        if (!child_want || child_want == child) {
            Py_XDECREF(child_want);
            continue;
        }
        if (!fresh) {
            fresh = PyTuple_New(n);
            if (!fresh) {
                Py_DECREF(child_want);
                Py_DECREF(orig);
                return -1;
            }
            for (Py_ssize_t j = 0; j < n; ++j) {
                Py_INCREF(PyTuple_GET_ITEM(consts, j));
                PyTuple_SET_ITEM(fresh, j, PyTuple_GET_ITEM(consts, j));
            }
        }
        Py_SETREF(PyTuple_GET_ITEM(fresh, i), child_want);
    }
    // The code for functions of `orig`, borrowed (g_origin or `orig` keeps it); null when the
    // checks cannot cover the tree.
    PyObject* result = nullptr;
    auto build = [&]() -> int {
        if (!patchable) {
            Py_XDECREF(fresh);
            return 0;
        }
        PyObject* base = orig;
        if (fresh) {
            base = replace_consts(orig, fresh);
            Py_DECREF(fresh);
            if (!base) return -1;
            remember_origin(base, orig);
            Py_DECREF(base);  // g_origin keeps it
        }
        CodeInfo* info = code_info(base);
        if (!info || prepare(base, info) < 0) return -1;
        result = base;
        if (info->patched) {
            result = info->patched;
            remember_origin(result, orig);
            return 0;
        }
        if (!info->needs_trace) return 0;
        result = nullptr;
        if (info->all_lines) return 0;
        // The gate's copy must fit the frames of `base`; a function's own frames can grow.
        std::vector<int> lines;
        if (breakpoint_lines(base, info, lines) < 0) return -1;
        CodeInfo* ginfo = nullptr;
        PyObject* grown = lines.empty() ? nullptr : new_patched_copy(base, lines, true, &ginfo);
        if (!grown) return PyErr_Occurred() ? -1 : 0;
        remember_origin(grown, orig);
        Py_DECREF(grown);  // g_origin keeps it
        if (prepare(grown, ginfo) < 0) return -1;
        if (!ginfo->needs_trace) result = grown;
        return 0;
    };
    if (build() < 0) {
        Py_DECREF(orig);
        return -1;
    }
    if (st.generation != generation) {
        Py_DECREF(orig);
        *found = false;
        return 0;
    }
    *found = true;
    auto [at, inserted] = g_want.emplace(orig, result);
    if (inserted) {
        Py_XINCREF(result);  // the map's; it keeps the reference to orig taken above
    } else {
        Py_DECREF(orig);  // a scan in another thread got there first
        result = at->second;
    }
    Py_XINCREF(result);
    *want = result;
    return 0;
}

// Whether a frame running `code` is fine under swap mode, from what is already known: it runs
// the code swap mode gives its functions. False also when that is not known yet.
bool swap_frame_ok(PyObject* code) {
    PyObject* orig = original_of(code);
    if (orig == code) {
        CodeInfo* info = peek_info(code);
        if (!info) return false;
        if (!info->in_bp_file) return true;
    }
    PyObject* want = nullptr;
    bool found;
    if (want_of(orig, false, &want, &found) < 0) {
        PyErr_Clear();
        return false;
    }
    Py_XDECREF(want);
    return found && want == code;
}

enum class Verdict { kSafe, kUnsafe, kUnknown };

// Names the code that keeps swap mode off, for stats() (and whoever wonders why).
void note_blocker(const char* what, PyObject* code) {
    auto* co = reinterpret_cast<PyCodeObject*>(code);
    const char* file = PyUnicode_AsUTF8(co->co_filename);
    const char* name = PyUnicode_AsUTF8(co->co_name);
    if (!file || !name) PyErr_Clear();
    state().swap_blocker = std::string(what) + " " + (name ? name : "?") + " (" +
                           (file ? file : "?") + ":" + std::to_string(co->co_firstlineno) + ")";
}

// The codes of every frame that may still run: each thread's stack (including frames that have
// not started yet), suspended generators and coroutines, and `pending` (a frame the gate is
// about to start).
template <typename F>
void for_each_live_code(PyObject* objects, PyObject* pending, F&& visit) {
    if (pending) visit(pending);
    PyInterpreterState* interp = PyThreadState_Get()->interp;
    for (PyThreadState* ts = PyInterpreterState_ThreadHead(interp); ts;
         ts = PyThreadState_Next(ts)) {
        auto* f =
            ts->cframe ? reinterpret_cast<InterpreterFrame*>(ts->cframe->current_frame) : nullptr;
        for (; f; f = f->previous) visit(reinterpret_cast<PyObject*>(f->f_code));
    }
    const Py_ssize_t n = PyList_GET_SIZE(objects);
    for (Py_ssize_t i = 0; i < n; ++i) {
        PyObject* o = PyList_GET_ITEM(objects, i);
        if (!PyGen_Check(o) && !PyCoro_CheckExact(o) && !PyAsyncGen_CheckExact(o)) continue;
        auto* gen = reinterpret_cast<PyGenObject*>(o);
        if (gen->gi_frame_state >= 1) continue;  // FRAME_COMPLETED or FRAME_CLEARED
        visit(reinterpret_cast<PyObject*>(
            reinterpret_cast<InterpreterFrame*>(gen->gi_iframe)->f_code));
    }
}

int set_function_code(PyObject* function, PyObject* code) {
    if (PyObject_SetAttrString(function, "__code__", code) < 0) return -1;
    ++state().swapped;
    g_functions_swapped = true;
    return 0;
}

// Gives every function the code this generation wants for it and learns what the live frames
// run. May run Python code (canonic filenames, audit hooks), so other threads may run meanwhile.
int swap_fix(PyObject* objects, PyObject* pending) {
    const Py_ssize_t n = PyList_GET_SIZE(objects);
    for (Py_ssize_t i = 0; i < n; ++i) {
        PyObject* o = PyList_GET_ITEM(objects, i);
        if (!PyFunction_Check(o)) continue;
        PyObject* code = PyFunction_GET_CODE(o);
        PyObject* orig = original_of(code);
        if (orig == code) {
            CodeInfo* info = code_info(code);
            if (!info) return -1;
            if (!info->in_bp_file) continue;
        }
        PyObject* want = nullptr;
        bool found;
        if (want_of(orig, true, &want, &found) < 0) return -1;
        if (!found) continue;  // breakpoints changed meanwhile: the check will say so
        // A tree the checks cannot cover: the gate serves it, from the original.
        int rc = 0;
        if (!want) {
            if (orig != code) rc = PyObject_SetAttrString(o, "__code__", orig);
        } else {
            if (want != code) rc = set_function_code(o, want);
            Py_DECREF(want);
        }
        if (rc < 0) return -1;
    }
    int rc = 0;
    for_each_live_code(objects, pending, [&rc](PyObject* code) {
        if (rc < 0) return;
        PyObject* orig = original_of(code);
        CodeInfo* info = code_info(orig);
        PyObject* want = nullptr;
        bool found;
        if (!info || (info->in_bp_file && want_of(orig, true, &want, &found) < 0)) rc = -1;
        if (rc == 0 && info->in_bp_file) Py_XDECREF(want);
    });
    return rc;
}

// Decides from what swap_fix learnt, without running Python code (no other thread runs
// meanwhile): kUnknown when something appeared since.
Verdict swap_verify(PyObject* objects, PyObject* pending) {
    Verdict verdict = Verdict::kSafe;
    const Py_ssize_t n = PyList_GET_SIZE(objects);
    for (Py_ssize_t i = 0; i < n && verdict == Verdict::kSafe; ++i) {
        PyObject* o = PyList_GET_ITEM(objects, i);
        if (!PyFunction_Check(o)) continue;
        PyObject* code = PyFunction_GET_CODE(o);
        PyObject* orig = original_of(code);
        if (orig == code) {
            CodeInfo* info = peek_info(code);
            if (!info) {
                verdict = Verdict::kUnknown;
                break;
            }
            if (!info->in_bp_file) continue;
        }
        PyObject* want = nullptr;
        bool found;
        if (want_of(orig, false, &want, &found) < 0) PyErr_Clear();
        Py_XDECREF(want);
        if (!found || (want && want != code)) {
            verdict = Verdict::kUnknown;
        } else if (!want) {
            verdict = Verdict::kUnsafe;
            note_blocker("function whose checks cannot be compiled in:", orig);
        }
    }
    if (verdict != Verdict::kSafe) return verdict;
    for_each_live_code(objects, pending, [&verdict](PyObject* code) {
        if (verdict == Verdict::kUnsafe || swap_frame_ok(code)) return;
        PyObject* orig = original_of(code);
        PyObject* want = nullptr;
        bool found;
        if (orig == code && !peek_info(code)) {
            verdict = Verdict::kUnknown;
            return;
        }
        if (want_of(orig, false, &want, &found) < 0) PyErr_Clear();
        Py_XDECREF(want);
        verdict = found ? Verdict::kUnsafe : Verdict::kUnknown;
        if (found) note_blocker("frame or generator running", code);
    });
    return verdict;
}

void set_swap(bool on) {
    g_swap = on;
    state().swap = on;
}

void schedule_rescan(bool first) {
    g_rescan_delay =
        first ? kFirstRescanDelay
              : std::min(2 * std::max(g_rescan_delay, kFirstRescanDelay), kLongestRescanDelay);
    g_rescan_due = steady_ns() + g_rescan_delay;
    g_rescan_pending = true;
}

// Tries swap mode: gives functions their patched trees and, if that is safe, removes the
// evaluator (and any thread's tracing, which nothing needs then). The gate stays otherwise.
int swap_scan(PyObject* pending, bool* safe) {
    *safe = false;
    ++state().swap_scans;
    state().swap_blocker.clear();
    long frozen_count = frozen_objects();
    if (frozen_count < 0) return -1;
    if (frozen_count != 0) {
        state().swap_blocker = "gc.freeze()";
        return 0;
    }
    bool guard = g_in_swap_code;
    g_in_swap_code = true;
    int rc = 0;
    for (int attempt = 0; attempt < 3 && rc == 0 && !*safe; ++attempt) {
        PyObject* objects = heap_objects();
        if (!objects || swap_fix(objects, pending) < 0) {
            Py_XDECREF(objects);
            rc = -1;
            break;
        }
        Py_DECREF(objects);
        // No collection (and so no finalizer running Python code) between the check and the
        // switch.
        int was_enabled = PyGC_Disable();
        objects = heap_objects();
        if (!objects) {
            if (was_enabled) PyGC_Enable();
            rc = -1;
            break;
        }
        Verdict verdict = swap_verify(objects, pending);
        if (verdict == Verdict::kSafe) {
            *safe = true;
            set_swap(true);
            install_gate(false);
            PyInterpreterState* interp = PyThreadState_Get()->interp;
            for (PyThreadState* ts = PyInterpreterState_ThreadHead(interp); ts;
                 ts = PyThreadState_Next(ts))
                if (ts->c_tracefunc == tracer && set_trace(ts, false) < 0) rc = -1;
        }
        if (was_enabled) PyGC_Enable();
        Py_DECREF(objects);
        if (verdict == Verdict::kUnsafe) break;
    }
    g_in_swap_code = guard;
    return rc;
}

// Gives every function its original code back and forgets the copies nothing else holds.
int swap_restore() {
    if (!g_functions_swapped) return 0;
    bool guard = g_in_swap_code;
    g_in_swap_code = true;
    PyObject* objects = heap_objects();
    int rc = objects ? 0 : -1;
    const Py_ssize_t n = objects ? PyList_GET_SIZE(objects) : 0;
    for (Py_ssize_t i = 0; i < n && rc == 0; ++i) {
        PyObject* o = PyList_GET_ITEM(objects, i);
        if (!PyFunction_Check(o)) continue;
        auto it = g_origin.find(PyFunction_GET_CODE(o));
        if (it != g_origin.end() && PyObject_SetAttrString(o, "__code__", it->second) < 0) rc = -1;
    }
    Py_XDECREF(objects);
    g_in_swap_code = guard;
    if (rc < 0) return -1;
    g_functions_swapped = false;
    clear_want();
    g_want_generation = 0;
    std::vector<PyObject*> kept;
    for (auto it = g_origin_order.rbegin(); it != g_origin_order.rend(); ++it) {
        PyObject* copy = *it;
        if (Py_REFCNT(copy) > 1) {
            kept.push_back(copy);
            continue;
        }
        PyObject* orig = g_origin[copy];
        g_origin.erase(copy);
        Py_DECREF(copy);
        Py_DECREF(orig);
    }
    g_origin_order.assign(kept.rbegin(), kept.rend());
    return 0;
}

// Swap mode can no longer vouch for every frame: the gate takes over at once.
void swap_to_gate() {
    if (!g_swap) return;
    set_swap(false);
    install_gate(true);
    schedule_rescan(true);
}

void maybe_rescan(PyObject* pending) {
    if (!g_gate || g_swap || steady_ns() < g_rescan_due) return;
    g_rescan_pending = false;
    bool safe = false;
    if (swap_scan(pending, &safe) < 0) PyErr_Clear();
    if (!safe && g_gate) schedule_rescan(false);
}

// Whether some code object in the tree of `code` comes from a breakpoint file.
int tree_in_bp_file(PyObject* code) {
    CodeInfo* info = code_info(code);
    if (!info) return -1;
    if (info->in_bp_file) return 1;
    PyObject* consts = reinterpret_cast<PyCodeObject*>(code)->co_consts;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(consts); ++i) {
        PyObject* child = PyTuple_GET_ITEM(consts, i);
        if (!PyCode_Check(child)) continue;
        int rc = tree_in_bp_file(child);
        if (rc != 0) return rc;
    }
    return 0;
}

// New code in a breakpoint file (an import, exec, compile, a code object built by hand) may
// become functions or frames that swap mode has not patched: it hands over to the gate.
int audit_hook(const char* event, PyObject* args, void*) {
    if (!g_swap || g_in_swap_code) return 0;
    int hit = 0;
    if (std::strcmp(event, "exec") == 0) {
        PyObject* code = PyTuple_Size(args) > 0 ? PyTuple_GetItem(args, 0) : nullptr;
        if (code && PyCode_Check(code)) {
            g_in_swap_code = true;
            hit = tree_in_bp_file(code);
            g_in_swap_code = false;
        }
    } else if (std::strcmp(event, "compile") == 0 || std::strcmp(event, "code.__new__") == 0) {
        PyObject* filename = PyTuple_Size(args) > 1 ? PyTuple_GetItem(args, 1) : nullptr;
        if (filename && PyUnicode_Check(filename)) {
            g_in_swap_code = true;
            hit = is_bp_filename(filename);
            g_in_swap_code = false;
        } else {
            hit = filename && filename != Py_None;  // bytes or a path: not worth the risk
        }
    } else {
        return 0;
    }
    if (hit < 0) PyErr_Clear();
    if (hit != 0) swap_to_gate();
    return 0;
}

// A code object made from a patched copy by the program (`f.__code__.replace(...)` while `f` is
// swapped, or a frame's f_code) holds the tails without knowing them: the checker would do
// nothing in it and the jump back from a tail would report its line a second time. It gets the
// description of the copy it came from, with the program's own code minus the checks as its
// original.
int adopt_derived(PyObject* code, CodeInfo* info) {
    PyObject* consts = reinterpret_cast<PyCodeObject*>(code)->co_consts;
    const Py_ssize_t n = PyTuple_GET_SIZE(consts);
    if (n == 0 || PyTuple_GET_ITEM(consts, n - 1) != g_checker) return 0;
    PyObject* bytes = PyObject_GetAttrString(code, "co_code");
    if (!bytes) return -1;
    const Patch* source = nullptr;
    auto consider = [&](PyObject* copy) -> int {
        if (source || copy == code) return 0;
        const CodeInfo* copy_info = stored_info(copy);
        if (!copy_info || !copy_info->patch) return 0;
        PyObject* copy_bytes = PyObject_GetAttrString(copy, "co_code");
        if (!copy_bytes) return -1;
        int same = PyObject_RichCompareBool(bytes, copy_bytes, Py_EQ);
        Py_DECREF(copy_bytes);
        if (same > 0) source = copy_info->patch.get();
        return same < 0 ? -1 : 0;
    };
    int rc = 0;
    for (auto it = g_origin.begin(); it != g_origin.end() && rc == 0; ++it)
        rc = consider(it->first);
    for (size_t i = 0; i < g_live_patches.size() && rc == 0; ++i) rc = consider(g_live_patches[i]);
    Py_DECREF(bytes);
    if (rc < 0 || !source) return rc;
    PyObject* base = source->original;
    PyObject* kwargs = PyDict_New();
    PyObject* plain_consts = PyTuple_GetSlice(consts, 0, n - 1);
    rc = kwargs && plain_consts ? PyDict_SetItemString(kwargs, "co_consts", plain_consts) : -1;
    Py_XDECREF(plain_consts);
    for (const char* name : {"co_code", "co_linetable", "co_exceptiontable", "co_stacksize"}) {
        if (rc < 0) break;
        PyObject* value = PyObject_GetAttrString(base, name);
        rc = value ? PyDict_SetItemString(kwargs, name, value) : -1;
        Py_XDECREF(value);
    }
    PyObject* plain = nullptr;
    if (rc == 0) {
        bool guard = g_in_swap_code;
        g_in_swap_code = true;
        plain = replace_code(code, kwargs);
        g_in_swap_code = guard;
    }
    Py_XDECREF(kwargs);
    if (!plain) return -1;
    if (info->patch) {  // adopted meanwhile, while Python code ran
        Py_DECREF(plain);
        return 0;
    }
    auto* patch = new Patch;
    patch->original = plain;
    patch->code_units = source->code_units;
    patch->sites = source->sites;
    patch->lines = source->lines;
    info->patch.reset(patch);
    return 0;
}

// In breakpoint-only mode: whether swap mode takes the gate's place (see above). Returns -1
// with an exception set.
int reconfigure_swap(bool gate) {
    State& st = state();
    if (!gate || !g_swap_allowed || !g_patch_allowed || !g_audit_hook) {
        g_bp_mode_generation = gate ? st.generation : 0;
        g_rescan_pending = false;
        set_swap(false);
        install_gate(gate);
        return gate ? 0 : swap_restore();
    }
    // Staying in breakpoint-only mode with the same breakpoints (a continue after a stop): swap
    // mode stays, and the gate waits for its rescan.
    if (g_bp_mode_generation == st.generation) {
        install_gate(!g_swap);
        return 0;
    }
    // Breakpoints changed in breakpoint-only mode: the gate serves them at once (it handles the
    // copies functions hold) and the scan waits for the rescan, so that a burst of changes (a
    // pause sets a breakpoint on every line of every stack) costs no scan each.
    if (g_bp_mode_generation != 0) {
        g_bp_mode_generation = st.generation;
        set_swap(false);
        install_gate(true);
        schedule_rescan(true);
        return 0;
    }
    g_bp_mode_generation = st.generation;
    set_swap(false);
    install_gate(true);
    bool safe = false;
    if (swap_scan(nullptr, &safe) < 0) return -1;
    if (safe) {
        g_rescan_pending = false;
    } else {
        schedule_rescan(true);
    }
    return 0;
}
#endif

// A thread running a frame whose code holds a breakpoint without its check (it was already
// running when the breakpoint was set) must stay traced until that frame returns, because the
// gate only sees frames as they start or resume.
int needs_tracing(PyThreadState* ts, bool* result) {
    *result = false;
    PyFrameObject* f = PyThreadState_GetFrame(ts);
    while (f) {
        PyObject* code = reinterpret_cast<PyObject*>(PyFrame_GetCode(f));
        CodeInfo* info = code_info(code);
        int rc = info ? prepare(code, info) : -1;
        Py_DECREF(code);
        if (rc < 0) {
            Py_DECREF(f);
            return -1;
        }
        if (info->needs_trace) {
            *result = true;
            Py_DECREF(f);
            return 0;
        }
        PyFrameObject* back = PyFrame_GetBack(f);
        Py_DECREF(f);
        f = back;
    }
    return 0;
}

// First event of a thread started through threading: swap the Python-level hook for the C tracer
// and handle the event itself.
PyObject* thread_hook(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
    if (nargs != 3 || !PyFrame_Check(args[0])) Py_RETURN_NONE;
    PyEval_SetTrace(tracer, nullptr);
    auto* frame = reinterpret_cast<PyFrameObject*>(args[0]);
    if (tracer(nullptr, frame, PyTrace_CALL, Py_None) < 0) return nullptr;
    Py_RETURN_NONE;
}

PyMethodDef thread_hook_def = {"dpdb_thread_hook",
                               reinterpret_cast<PyCFunction>(reinterpret_cast<void*>(thread_hook)),
                               METH_FASTCALL, nullptr};

// What threading.settrace() does, without running Python code while our tracer is installed.
int set_thread_hook(bool on) {
    if (on == g_hook_installed) return 0;
    if (!on) {
        PyObject* current = PyObject_GetAttrString(g_threading, "_trace_hook");
        if (!current) return -1;
        bool ours = current == g_thread_hook;
        Py_DECREF(current);
        if (!ours) {
            g_hook_installed = false;
            return 0;
        }
    }
    if (PyObject_SetAttrString(g_threading, "_trace_hook", on ? g_thread_hook : Py_None) < 0)
        return -1;
    g_hook_installed = on;
    return 0;
}

// bdb may give f_trace to a frame we had silenced (set_step restores the caller's trace
// function); such a frame must report its lines again.
void unsilence_traced_frames() {
    PyFrameObject* f = PyEval_GetFrame();
    Py_XINCREF(f);
    while (f) {
        if (frame_trace(f)) frame_trace_lines(f) = 1;
        PyFrameObject* back = PyFrame_GetBack(f);
        Py_DECREF(f);
        f = back;
    }
}

}  // namespace

const char* backend_name() {
    return "tracer";
}

int backend_init() {
    g_threading = PyImport_ImportModule("threading");
    if (!g_threading) return -1;
    g_thread_hook = PyCFunction_New(&thread_hook_def, nullptr);
    if (!g_thread_hook || !backend_checker()) return -1;
#if PY_VERSION_HEX >= 0x030B0000
    // Once per process: a hook cannot be removed, so it returns at once outside swap mode.
    if (PySys_AddAuditHook(audit_hook, nullptr) == 0) {
        g_audit_hook = true;
    } else {
        PyErr_Clear();  // vetoed by another hook: no swap mode
    }
#endif
    return patch_init(g_checker);
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

void backend_allow(const Mechanisms& allowed) {
    g_gate_allowed = allowed.gate;
    g_patch_allowed = allowed.gate && allowed.patch;
#if PY_VERSION_HEX >= 0x030B0000
    g_swap_allowed = g_patch_allowed && allowed.swap;
#endif
}

int backend_reconfigure() {
    State& st = state();
    ++g_reconfigured;
    bool gate = st.armed && g_gate_allowed && !st.any_nontrivial && !st.any_calls;
    g_gate = gate;
#if PY_VERSION_HEX >= 0x030B0000
    if (reconfigure_swap(gate) < 0) return -1;
#else
    install_gate(gate);
#endif
    if (set_thread_hook(st.armed && !gate) < 0) return -1;
    PyInterpreterState* interp = PyThreadState_Get()->interp;
    for (PyThreadState* ts = PyInterpreterState_ThreadHead(interp); ts;
         ts = PyThreadState_Next(ts)) {
        if (ts->c_tracefunc && ts->c_tracefunc != tracer) continue;
        bool want = st.armed;
        if (gate && needs_tracing(ts, &want) < 0) return -1;
        if (want != (ts->c_tracefunc == tracer) && set_trace(ts, want) < 0) return -1;
    }
    if (st.armed) unsilence_traced_frames();
    return 0;
}

}  // namespace dpdb::engine

#endif
