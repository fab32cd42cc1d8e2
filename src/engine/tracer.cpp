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

int tracer(PyObject*, PyFrameObject* frame, int what, PyObject* arg) {
    State& st = state();
    if (!st.armed) return 0;
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
    return _PyEval_SetTrace(ts, on ? tracer : nullptr, nullptr);
}

// Fills the per-generation fields of `info` (see CodeInfo): whether frames running `code` need
// the tracer, and for an original holding breakpoints, its patched copy when one can be made.
int prepare(PyObject* code, CodeInfo* info) {
    if (info->prepared) return 0;
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
    if (code_lines(code, lines) < 0) return -1;
    lines.erase(std::remove_if(lines.begin(), lines.end(),
                               [info](int line) { return !info->is_bp_line(line); }),
                lines.end());
    if (lines.empty()) return 0;
    info->needs_trace = true;
    if (!g_patch_allowed) return 0;
    Patch* patch = nullptr;
    PyObject* patched = build_patched(code, lines, &patch);
    if (!patched) return PyErr_Occurred() ? -1 : 0;
    CodeInfo* pinfo = code_info(patched);
    if (!pinfo) {
        delete patch;
        Py_DECREF(patched);
        return -1;
    }
    pinfo->patch.reset(patch);
    g_live_patches.push_back(patched);
    ++st.patched;
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

PyObject* gate_eval(PyThreadState* ts, EvalFrame f, int throwflag) {
    if (!g_gate || (ts->c_tracefunc && ts->c_tracefunc != tracer))
        return _PyEval_EvalFrameDefault(ts, f, throwflag);
    CodeInfo* info = code_info(eval_code(f));
    if (!info) return nullptr;
    if (info->in_bp_file && !(info = switch_code(f, info))) return nullptr;
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

// The builtin the patched code calls at the start of a breakpoint line (see the file comment).
PyObject* check_breakpoint(PyObject*, PyObject*) {
    PyThreadState* ts = PyThreadState_Get();
    // As for a line event: nothing inside a trace function, nor under somebody else's tracer.
    if (!state().armed || ts->tracing || (ts->c_tracefunc && ts->c_tracefunc != tracer))
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
    g_checker = PyCFunction_New(&check_def, nullptr);
    if (!g_thread_hook || !g_checker) return -1;
    return patch_init(g_checker);
}

void backend_allow_gate(bool gate, bool patch) {
    g_gate_allowed = gate;
    g_patch_allowed = gate && patch;
}

int backend_reconfigure() {
    State& st = state();
    ++g_reconfigured;
    bool gate = st.armed && g_gate_allowed && !st.any_nontrivial && !st.any_calls;
    g_gate = gate;
    install_gate(gate);
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
