// CPython 3.12+: the engine as a sys.monitoring tool with C callbacks. Events stay switched off
// while nothing is armed; with breakpoints set, the code objects of files holding breakpoints are
// found (3.13: by PY_START/PY_RESUME, every other code location answering DISABLE once; 3.12: by
// scan mode, scan.cpp), LINE runs only on those code objects and is DISABLEd again on every line
// without a breakpoint.
#include <Python.h>

#if PY_VERSION_HEX >= 0x030C0000

#include <dlfcn.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "engine/code_tables.hpp"
#include "engine/condition.hpp"
#include "engine/condition_guard.hpp"
#include "engine/engine.hpp"
#include "engine/fast_copy.hpp"
#include "engine/frame_access.hpp"
#include "engine/monitoring.hpp"
#include "engine/superinstructions.hpp"

namespace dpdb::engine {
namespace {

PyObject* none() {
    Py_RETURN_NONE;
}
// ---- superinstructions (3.12) ----
//
// Every code object whose events change loses its superinstructions (superinstructions.hpp), so
// the code of a breakpoint file, and on 3.12 under a global PY_START every code object, would run
// a few per cent slower for good after it answered DISABLE. CPython takes an event out after the
// callback returned, so the superinstructions go back later, from a pending call: the next time
// any thread of the interpreter checks for one (at a call or a backward jump).

#if PY_VERSION_HEX < 0x030D0000
constexpr bool kRestoreSuperinstructions = true;
#else
constexpr bool kRestoreSuperinstructions = false;
#endif

// Schedules `func` to run soon with the GIL. CPython 3.12 exports _PyEval_AddPendingCall
// (PyAPI_FUNC in internal/pycore_ceval.h): unlike Py_AddPendingCall, which only the main thread
// serves, its calls can be served by any thread, so the code of worker threads gets its
// superinstructions back while the main thread waits in a join. Looked up when the engine
// starts, so that an interpreter without it still loads the engine and uses Py_AddPendingCall.
using AddPendingCall = int (*)(PyInterpreterState*, int (*)(void*), void*, int);
AddPendingCall any_thread_pending_call = nullptr;

int add_pending_call(int (*func)(void*)) {
    if (any_thread_pending_call)
        return any_thread_pending_call(PyInterpreterState_Get(), func, nullptr, 0);
    return Py_AddPendingCall(func, nullptr);
}

// A code object is walked whole once after each time CPython instrumented it (which takes every
// pair apart); after that, a line event taken out frees only the pairs around that line: a long
// function answering DISABLE line after line is not walked once per line.
int restore(PyObject* code, const std::vector<int>& line_starts) {
    CodeInfo* info = known_code_info(code);  // no Python code runs in a pending call
    const std::uint64_t version =
        reinterpret_cast<PyCodeObject*>(code)->_co_instrumentation_version;
    if (info && info->restored_at_version == version)
        return restore_superinstructions_at(code, line_starts);
    int restored = restore_superinstructions(code);
    if (info && restored >= 0) info->restored_at_version = version;
    return restored;
}

// Runs as a pending call: with the GIL, between two instructions of some thread, and must not
// raise into the code that thread runs.
int restore_pending(void*) {
    Monitoring& m = mon();
    m.restore_scheduled = false;
    std::unordered_map<PyObject*, std::vector<int>> codes;
    codes.swap(m.to_restore);
    PyObject* pending = PyErr_GetRaisedException();
    for (auto& [code, line_starts] : codes) {
        int restored = restore(code, line_starts);
        if (restored < 0)
            PyErr_WriteUnraisable(code);
        else
            state().superinstructions += static_cast<std::uint64_t>(restored);
        Py_DECREF(code);
    }
    PyErr_SetRaisedException(pending);
    return 0;
}

// `line_start` is the code unit of the line whose event is being taken out, or -1.
void restore_later(PyObject* code, int line_start = -1) {
    Monitoring& m = mon();
    if (!kRestoreSuperinstructions || !m.restore_allowed) return;
    auto [it, added] = m.to_restore.try_emplace(code);
    if (added) Py_INCREF(code);
    if (line_start >= 0) it->second.push_back(line_start);
    if (m.restore_scheduled) return;
    m.restore_scheduled = add_pending_call(restore_pending) == 0;
}

void keep_for_restore_after_stepping(PyObject* code) {
    Monitoring& m = mon();
    if (!kRestoreSuperinstructions || !m.restore_allowed) return;
    if (m.ran_under_global_events.insert(code).second) Py_INCREF(code);
}

// DISABLE for the event `code` is answering.
PyObject* disable(PyObject* code) {
    restore_later(code);
    return Py_NewRef(mon().disable);
}

// DISABLE for a line event: CPython points the frame at the line's first instruction before it
// calls the tools. PyFrame_GetLasti counts bytes, two to a code unit.
PyObject* disable_line(PyObject* code) {
    PyFrameObject* frame = PyEval_GetFrame();
    const int lasti = frame ? PyFrame_GetLasti(frame) : -1;
    restore_later(code, lasti >= 0 ? lasti / 2 : -1);
    return Py_NewRef(mon().disable);
}

int call_monitoring(PyObject* fn, PyObject* code, int events) {
    PyObject* result = code ? PyObject_CallFunction(fn, "iOi", mon().tool, code, events)
                            : PyObject_CallFunction(fn, "ii", mon().tool, events);
    if (!result) return -1;
    Py_DECREF(result);
    return 0;
}

}  // namespace

// Only code whose lines reach a breakpoint's gets line events, not every code object of the
// file: CPython puts an INSTRUMENTED_LINE wherever a line starts, and one that only jumps of its
// own line reach (a comprehension's or generator expression's FOR_ITER, a `yield from`'s SEND)
// never reports the line, so never answers DISABLE, and its instruction never specialises again
// (1.1-1.4x on generator and comprehension code for a breakpoint elsewhere in the file).
int add_break_events(PyObject* code) {
    CodeInfo* info = code_info(code);
    return info ? add_break_events(code, info) : -1;
}

int add_break_events(PyObject* code, CodeInfo* info) {
    if (!info->in_bp_file) return 0;
    // A function breakpoint's lines are its code's: co_firstlineno is among `lines`.
    if (info->has_break_line < 0)
        info->has_break_line = has_line_in(reinterpret_cast<PyCodeObject*>(code), *info->lines);
    if (!info->has_break_line) return 0;
    return add_local(code, kBreakLocal);
}

int add_local(PyObject* code, int events) {
    Monitoring& m = mon();
    auto it = m.local.find(code);
    int before = it == m.local.end() ? 0 : it->second;
    if ((before | events) == before) return 0;
    if (call_monitoring(m.set_local_events, code, before | events) < 0) return -1;
    if (it == m.local.end()) {
        Py_INCREF(code);
        m.local[code] = events;
    } else {
        it->second |= events;
    }
    return 0;
}

namespace {

// After a step: brings the instrumentation of the code that ran meanwhile up to date now (a
// change of its local events makes CPython re-instrument it at once; changed back, it ends with
// the events it had), so that its superinstructions can go back. Returns -1 with an exception.
int restore_after_stepping() {
    Monitoring& m = mon();
    std::unordered_set<PyObject*> codes;
    codes.swap(m.ran_under_global_events);
    int rc = 0;
    for (PyObject* code : codes) {
        auto it = m.local.find(code);
        const int events = it == m.local.end() ? 0 : it->second;
        if (rc == 0 && (call_monitoring(m.set_local_events, code, events ^ bit(kPyReturn)) < 0 ||
                        call_monitoring(m.set_local_events, code, events) < 0))
            rc = -1;
        if (rc == 0) restore_later(code);
        Py_DECREF(code);
    }
    return rc;
}

// The containers of code objects below are taken out before they are walked: a call into the
// interpreter may run a collection, a finalizer, and so another thread, whose new code (the code
// watcher) or first call (PY_START) adds to them.
int clear_locals() {
    Monitoring& m = mon();
    std::map<PyObject*, int> local;
    local.swap(m.local);
    int rc = 0;
    for (auto& [code, events] : local) {
        if (rc == 0 && call_monitoring(m.set_local_events, code, 0) < 0) rc = -1;
        restore_later(code);
        Py_DECREF(code);
    }
    return rc;
}

// A code object that holds a breakpoint needs its line events from now on.
int discover(PyObject* code) {
    return add_break_events(code);
}

// Breakpoints set while frames of their code are already running: PY_START has passed for them,
// so give their code line events right away, in every thread.
int discover_running() {
    return for_each_running_code(discover);
}

PyFrameObject* current_frame() {
    PyFrameObject* frame = PyEval_GetFrame();
    if (!frame) PyErr_SetString(PyExc_SystemError, "dpdb engine: event without a frame");
    return frame;
}

PyObject* finish(int rc) {
    return rc < 0 ? nullptr : none();
}

PyObject* deliver(PyObject* code, Event event, PyObject* arg) {
    PyFrameObject* frame = current_frame();
    if (!frame) return nullptr;
    return finish(handle(frame, code, event, arg, 0));
}

PyObject* deliver_line(PyObject* code, int line, Event event) {
    PyFrameObject* frame = current_frame();
    if (!frame) return nullptr;
    Py_INCREF(frame);
    // As CPython's own line tracer does: f_lineno is authoritative while the debugger runs,
    // and a jump (pdb's "j") rewrites it.
    frame_lineno(frame) = line;
    int rc = handle(frame, code, event, Py_None, line);
    frame_lineno(frame) = 0;
    Py_DECREF(frame);
    return finish(rc);
}

// CPython 3.13 delivers the LINE event of a code object's first line, when that line also holds
// its start (a one-line function, a lambda), from the start's instrumentation: PY_START answered
// DISABLE there takes the line's event with it, and such a breakpoint stopped once, at the call
// that was running when it was set (python/cpython#155992). The code keeps its PY_START while
// that line holds a breakpoint, but for a fast copy whose tail takes that line's entry right after
// the start: its slow replica gives the line's event, and the start's is one the copy takes out.
// 3.14: the same, untested here.
bool start_carries_a_break(PyObject* code, CodeInfo* info) {
#if PY_VERSION_HEX >= 0x030D0000
    if (!info->in_bp_file) return false;
    if (info->start_carries_break < 0) {
        auto* co = reinterpret_cast<PyCodeObject*>(code);
        const int start = co->_co_firsttraceable;  // the RESUME, in code units
        const int line = PyCode_Addr2Line(co, 2 * start);
        const FastSite* site = nullptr;
        info->start_carries_break =
            line >= 0 && PyCode_Addr2Line(co, 2 * (start + 1)) == line && info->is_bp_line(line) &&
            !(info->fast && info->fast->locate(start + 1, &site) == FastCopy::At::kStart);
    }
    return info->start_carries_break;
#else
    (void)code;
    (void)info;
    return false;
#endif
}

PyObject* on_start(PyObject*, PyObject* const* args, Py_ssize_t) {
    State& st = state();
    PyObject* code = args[0];
    if (!st.armed) return disable(code);
    // Asked at every call of code whose start carries a break: one lookup of its CodeInfo.
    CodeInfo* info = st.breaks.empty() ? nullptr : code_info(code);
    if (!st.breaks.empty() && (!info || add_break_events(code, info) < 0)) return nullptr;
    if (!st.any_calls) return info && start_carries_a_break(code, info) ? none() : disable(code);
    keep_for_restore_after_stepping(code);
    return deliver(code, Event::kCall, Py_None);
}

PyObject* on_resume(PyObject*, PyObject* const* args, Py_ssize_t) {
    State& st = state();
    PyObject* code = args[0];
    if (!st.armed) return disable(code);
    if (!st.breaks.empty() && discover(code) < 0) return nullptr;
    if (!st.any_calls && !is_step_code(code)) return disable(code);
    keep_for_restore_after_stepping(code);
    return deliver(code, Event::kCall, Py_None);
}

PyObject* on_throw(PyObject*, PyObject* const* args, Py_ssize_t) {
    State& st = state();
    if (!st.armed || (!st.any_calls && !is_step_code(args[0]))) return none();
    return deliver(args[0], Event::kCall, Py_None);
}

bool steps_through(PyObject* code) {
    State& st = state();
    return st.armed && (st.any_stepping || is_step_code(code));
}

PyObject* on_return(PyObject*, PyObject* const* args, Py_ssize_t) {
    if (!steps_through(args[0])) return disable(args[0]);
    return deliver(args[0], Event::kReturn, args[2]);
}

PyObject* on_unwind(PyObject*, PyObject* const* args, Py_ssize_t) {
    if (!steps_through(args[0])) return none();
    return deliver(args[0], Event::kReturn, Py_None);
}

PyObject* exception_event(PyObject* code, PyObject* exc) {
    PyObject* tb = PyException_GetTraceback(exc);
    PyObject* tuple =
        PyTuple_Pack(3, reinterpret_cast<PyObject*>(Py_TYPE(exc)), exc, tb ? tb : Py_None);
    Py_XDECREF(tb);
    if (!tuple) return nullptr;
    PyObject* result = deliver(code, Event::kException, tuple);
    Py_DECREF(tuple);
    return result;
}

bool wants_exceptions(PyObject* code) {
    return steps_through(code) || (state().armed && state().any_generator_stop);
}

PyObject* on_raise(PyObject*, PyObject* const* args, Py_ssize_t) {
    if (!wants_exceptions(args[0])) return none();
    return exception_event(args[0], args[2]);
}

PyObject* on_stop_iteration(PyObject*, PyObject* const* args, Py_ssize_t) {
    if (!wants_exceptions(args[0])) return disable(args[0]);
    return exception_event(args[0], args[2]);
}

PyObject* line_event(PyObject* code, CodeInfo* info, int line) {
    State& st = state();
    if (!info->is_bp_line(line) && !st.any_stepping && !is_step_code(code))
        return disable_line(code);
    // Nobody steps, so bdb would look only for a breakpoint: false conditions need no frame.
    if (!st.any_nontrivial && conditions_false_running(code, info, line))
        return none_unless_raised();
    bool learning = info->all_lines;
    PyObject* result = deliver_line(code, line, Event::kLine);
    // bdb may have learned a function's first executable line from this event: the next event
    // works out anew which lines can stop (the info lives as long as the code).
    if (learning) info->generation = 0;
    return result;
}

// A line event in a fast copy (fast_copy.hpp). Its slow replica's is the line's event; the fast
// replica's never is; its start's is while someone steps (the guard then sends every frame the
// slow way, so the frame skips to the fast replica once the event is delivered).
PyObject* fast_copy_line(PyObject* code, CodeInfo* info, int line) {
    InterpreterFrameHead* running = running_frame(PyThreadState_Get());
    if (!running || running->pointers[kFrameCode] != code) return line_event(code, info, line);
    const int unit = frame_unit(running, code);
    if (info->fast->in_jump_tail(unit) || info->fast->lands_quietly_at(unit)) {
        restore_later(code, unit);
        return Py_NewRef(mon().disable);
    }
    const FastSite* site = nullptr;
    switch (info->fast->locate(unit, &site)) {
        case FastCopy::At::kFast:
            restore_later(code, unit);
            return Py_NewRef(mon().disable);
        case FastCopy::At::kEnd:
            // Reached from the tail alone, in the middle of the line: no event of its own.
            if (state().any_nontrivial || is_step_code(code)) return none();
            restore_later(code, unit);
            return Py_NewRef(mon().disable);
        case FastCopy::At::kStart:
            if (!state().any_nontrivial && !is_step_code(code)) {
                restore_later(code, unit);
                return Py_NewRef(mon().disable);
            }
            break;
        default:
            break;
    }
    PyObject* result = line_event(code, info, line);
    // Where the frame goes on from a site's start, bdb has had the line (or moved the frame
    // there, a jump, which reports no line): the slow replica's event would be one more.
    const int now = frame_unit(running, code);
    if (result && info->fast->locate(now, &site) == FastCopy::At::kStart)
        set_frame_unit(running, code, site->fast);
    return result;
}

PyObject* on_line(PyObject*, PyObject* const* args, Py_ssize_t) {
    State& st = state();
    PyObject* code = args[0];
    if (!st.armed) return disable(code);
    int line = PyLong_AsLong(args[1]);
    CodeInfo* known = known_code_info(code);
    // The common hit of a hot conditional breakpoint, from what the line's last hit learned.
    // A copy that took no line (it only carries copies of its nested code) is the code's own.
    if (known && (!known->fast || known->fast->sites.empty()) && !st.any_nontrivial &&
        conditions_false_known_running(code, known, line))
        return none();
    CodeInfo* info = known ? known : code_info(code);
    if (!info) return nullptr;
    if (info->fast && !info->fast->sites.empty()) return fast_copy_line(code, info, line);
    return line_event(code, info, line);
}

// sys.settrace reports a backward jump to the start of the same line as a new "line" event
// (one-line loops); CPython's legacy tracer does it from JUMP, and so must we.
PyObject* on_jump(PyObject*, PyObject* const* args, Py_ssize_t) {
    State& st = state();
    PyObject* code = args[0];
    if (!st.armed) return disable(code);
    int from = PyLong_AsLong(args[1]);
    int to = PyLong_AsLong(args[2]);
    if (to > from) return disable(code);
    auto* co = reinterpret_cast<PyCodeObject*>(code);
    int to_line = PyCode_Addr2Line(co, to);
    if (to_line < 0 || to_line != PyCode_Addr2Line(co, from)) return disable(code);
    CodeInfo* info = code_info(code);
    if (!info) return nullptr;
    // A fast copy's jump taken where the line's conditions are known false (fast_copy.hpp).
    if (info->fast && info->fast->in_fast_jump(from / 2)) return disable(code);
    if (!info->is_bp_line(to_line) && !st.any_stepping && !is_step_code(code)) return disable(code);
    // As line_event: nobody steps, so false conditions need no frame object nor bdb.
    if (!st.any_nontrivial && conditions_false_running(code, info, to_line))
        return none_unless_raised();
    return deliver_line(code, to_line, Event::kLine);
}

PyObject* on_instruction(PyObject*, PyObject* const* args, Py_ssize_t) {
    State& st = state();
    if (!st.armed || !st.any_opcodes) return none();
    PyFrameObject* frame = current_frame();
    if (!frame) return nullptr;
    if (!frame_trace_opcodes(frame) || !frame_trace(frame)) return none();
    return finish(handle(frame, args[0], Event::kOpcode, Py_None, PyFrame_GetLineNumber(frame)));
}

struct Callback {
    int event;
    const char* name;
    PyObject* (*fn)(PyObject*, PyObject* const*, Py_ssize_t);
};

const Callback kCallbacks[] = {
    {kPyStart, "py_start", on_start},
    {kPyResume, "py_resume", on_resume},
    {kPyThrow, "py_throw", on_throw},
    {kPyReturn, "py_return", on_return},
    {kPyYield, "py_yield", on_return},
    {kPyUnwind, "py_unwind", on_unwind},
    {kRaise, "raise", on_raise},
    {kStopIteration, "stop_iteration", on_stop_iteration},
    {kLineEv, "line", on_line},
    {kJump, "jump", on_jump},
    {kInstruction, "instruction", on_instruction},
};

PyMethodDef method_defs[sizeof(kCallbacks) / sizeof(kCallbacks[0])];

}  // namespace

const char* backend_name() {
    return "monitoring";
}

int backend_init() {
    Monitoring& m = mon();
    PyObject* sys = PyImport_ImportModule("sys");
    if (!sys) return -1;
    PyObject* monitoring = PyObject_GetAttrString(sys, "monitoring");
    m.current_frames = PyObject_GetAttrString(sys, "_current_frames");
    Py_DECREF(sys);
    if (!monitoring || !m.current_frames) return -1;
    m.disable = PyObject_GetAttrString(monitoring, "DISABLE");
    m.set_events = PyObject_GetAttrString(monitoring, "set_events");
    m.set_local_events = PyObject_GetAttrString(monitoring, "set_local_events");
    m.restart_events = PyObject_GetAttrString(monitoring, "restart_events");
    PyObject* use_tool_id = PyObject_GetAttrString(monitoring, "use_tool_id");
    PyObject* register_callback = PyObject_GetAttrString(monitoring, "register_callback");
    Py_DECREF(monitoring);
    if (!m.disable || !m.set_events || !m.set_local_events || !m.restart_events || !use_tool_id ||
        !register_callback) {
        Py_XDECREF(use_tool_id);
        Py_XDECREF(register_callback);
        return -1;
    }
    // DEBUGGER_ID first; another debugger may hold it, and any free id works the same.
    for (int tool : {0, 3, 4, 1, 2, 5}) {
        PyObject* r = PyObject_CallFunction(use_tool_id, "is", tool, "dpdb");
        if (r) {
            Py_DECREF(r);
            m.tool = tool;
            break;
        }
        PyErr_Clear();
    }
    Py_DECREF(use_tool_id);
    if (m.tool < 0) {
        Py_DECREF(register_callback);
        PyErr_SetString(PyExc_RuntimeError, "dpdb engine: every sys.monitoring tool id is taken");
        return -1;
    }
    int i = 0;
    for (const Callback& cb : kCallbacks) {
        method_defs[i] = {cb.name, reinterpret_cast<PyCFunction>(reinterpret_cast<void*>(cb.fn)),
                          METH_FASTCALL, nullptr};
        PyObject* fn = PyCFunction_New(&method_defs[i], nullptr);
        ++i;
        if (!fn) {
            Py_DECREF(register_callback);
            return -1;
        }
        PyObject* r = PyObject_CallFunction(register_callback, "iiO", m.tool, bit(cb.event), fn);
        Py_DECREF(fn);
        if (!r) {
            Py_DECREF(register_callback);
            return -1;
        }
        Py_DECREF(r);
    }
    Py_DECREF(register_callback);
    if (kRestoreSuperinstructions) {
        if (superinstructions_init() < 0) return -1;
        any_thread_pending_call =
            reinterpret_cast<AddPendingCall>(::dlsym(RTLD_DEFAULT, "_PyEval_AddPendingCall"));
    }
    scan_init();
    if (condition_guard_init() < 0 || fast_copy_init() < 0) return -1;
    return 0;
}

int backend_reconfigure() {
    State& st = state();
    Monitoring& m = mon();
    if (m.tool < 0) return 0;
    if (reconfigure_scan() < 0) return -1;
    int global = 0;
    std::vector<PyObject*> opcode_codes;
    if (st.armed) {
        if (!st.breaks.empty() && !st.scan) global |= bit(kPyStart) | bit(kPyResume);
        if (st.any_calls) global |= bit(kPyStart) | bit(kPyResume) | bit(kPyThrow);
        if (st.any_stepping) global |= kStepLocal | bit(kPyStart) | bit(kPyThrow);
        if (st.any_nontrivial) global |= bit(kRaise) | bit(kPyUnwind) | bit(kPyThrow);
        if (st.any_generator_stop) global |= bit(kRaise) | bit(kStopIteration);
        for (auto& [dbg, s] : st.by_debugger)
            if (!s->quitting)
                opcode_codes.insert(opcode_codes.end(), s->opcode_codes.begin(),
                                    s->opcode_codes.end());
    }
    if (m.applied && m.generation == st.generation && m.global_events == global &&
        m.scan == st.scan && m.step_codes == st.step_codes && m.opcode_codes == opcode_codes)
        return fast_copies_update();
    if (clear_locals() < 0) return -1;
    m.scan = st.scan;
    if (st.armed) {
        for (PyObject* code : st.step_codes)
            if (add_local(code, kStepLocal) < 0) return -1;
        for (PyObject* code : opcode_codes)
            if (add_local(code, bit(kInstruction)) < 0) return -1;
        if (st.scan) {
            if (apply_scan_codes() < 0) return -1;
        } else if (!st.breaks.empty() && discover_running() < 0) {
            return -1;
        }
    }
    if (call_monitoring(m.set_events, nullptr, global) < 0) return -1;
    PyObject* r = PyObject_CallNoArgs(m.restart_events);
    if (!r) return -1;
    Py_DECREF(r);
    if (!(st.armed && st.any_calls) && !m.ran_under_global_events.empty() &&
        restore_after_stepping() < 0)
        return -1;
    m.applied = true;
    m.generation = st.generation;
    m.global_events = global;
    m.step_codes = st.step_codes;
    m.opcode_codes = std::move(opcode_codes);
    return fast_copies_update();
}

void backend_allow(const Mechanisms& allowed) {
    mon().scan_allowed = allowed.scan;
    mon().restore_allowed = allowed.superinstructions;
    condition_guard_allow(allowed.guard);
}

PyObject* backend_checker() {
    return nullptr;
}

PyObject* backend_user_code(PyObject* code) {
    // sys.monitoring instruments the user's code in place; a fast copy leads back to it.
    auto* info = static_cast<CodeInfo*>(code_extra(code, state().extra_index));
    return info && info->fast && info->fast->original ? info->fast->original : code;
}

}  // namespace dpdb::engine

#endif
