// CPython 3.12+: the engine as a sys.monitoring tool with C callbacks. Events stay switched off
// while nothing is armed; with breakpoints set, PY_START/PY_RESUME find the code objects of files
// holding breakpoints (every other code location answers DISABLE once), LINE runs only on those
// code objects and is DISABLEd again on every line without a breakpoint.
#include <Python.h>

#if PY_VERSION_HEX >= 0x030C0000

#include <map>
#include <vector>

#include "engine/engine.hpp"
#include "engine/frame_access.hpp"

namespace dpdb::engine {
namespace {

enum : int {
    kPyStart = 0,
    kPyResume = 1,
    kPyReturn = 2,
    kPyYield = 3,
    kLineEv = 5,
    kInstruction = 6,
    kJump = 7,
    kStopIteration = 9,
    kRaise = 10,
    kPyUnwind = 12,
    kPyThrow = 13,
};
constexpr int bit(int e) {
    return 1 << e;
}

constexpr int kStepLocal = bit(kPyResume) | bit(kPyReturn) | bit(kPyYield) | bit(kLineEv) |
                           bit(kJump) | bit(kStopIteration);
constexpr int kBreakLocal = bit(kLineEv) | bit(kJump);

struct Monitoring {
    int tool = -1;
    PyObject* disable = nullptr;
    PyObject* set_events = nullptr;
    PyObject* set_local_events = nullptr;
    PyObject* restart_events = nullptr;
    PyObject* current_frames = nullptr;
    // Code objects we gave local events to, so that they can be taken back (strong refs).
    std::map<PyObject*, int> local;
    // What the last reconfigure applied.
    bool applied = false;
    std::uint64_t generation = 0;
    int global_events = -1;
    std::vector<PyObject*> step_codes;
    std::vector<PyObject*> opcode_codes;
};

Monitoring& mon() {
    static Monitoring m;
    return m;
}

PyObject* none() {
    Py_RETURN_NONE;
}
PyObject* disable() {
    return Py_NewRef(mon().disable);
}

int call_monitoring(PyObject* fn, PyObject* code, int events) {
    PyObject* result = code ? PyObject_CallFunction(fn, "iOi", mon().tool, code, events)
                            : PyObject_CallFunction(fn, "ii", mon().tool, events);
    if (!result) return -1;
    Py_DECREF(result);
    return 0;
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

int clear_locals() {
    Monitoring& m = mon();
    int rc = 0;
    for (auto& [code, events] : m.local) {
        if (rc == 0 && call_monitoring(m.set_local_events, code, 0) < 0) rc = -1;
        Py_DECREF(code);
    }
    m.local.clear();
    return rc;
}

// A code object that holds a breakpoint needs its line events from now on.
int discover(PyObject* code) {
    CodeInfo* info = code_info(code);
    if (!info) return -1;
    return info->in_bp_file ? add_local(code, kBreakLocal) : 0;
}

// Breakpoints set while frames of their code are already running: PY_START has passed for them,
// so give their code line events right away, in every thread.
int discover_running() {
    PyObject* frames = PyObject_CallNoArgs(mon().current_frames);
    if (!frames) return -1;
    Py_ssize_t pos = 0;
    PyObject *tid, *top;
    int rc = 0;
    while (rc == 0 && PyDict_Next(frames, &pos, &tid, &top)) {
        PyFrameObject* f = reinterpret_cast<PyFrameObject*>(Py_NewRef(top));
        while (f && rc == 0) {
            PyObject* code = reinterpret_cast<PyObject*>(PyFrame_GetCode(f));
            rc = discover(code);
            Py_DECREF(code);
            PyFrameObject* back = PyFrame_GetBack(f);
            Py_DECREF(f);
            f = back;
        }
        Py_XDECREF(f);
    }
    Py_DECREF(frames);
    return rc;
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

PyObject* on_start(PyObject*, PyObject* const* args, Py_ssize_t) {
    State& st = state();
    if (!st.armed) return disable();
    PyObject* code = args[0];
    if (!st.breaks.empty() && discover(code) < 0) return nullptr;
    if (!st.any_calls) return disable();
    return deliver(code, Event::kCall, Py_None);
}

PyObject* on_resume(PyObject*, PyObject* const* args, Py_ssize_t) {
    State& st = state();
    if (!st.armed) return disable();
    PyObject* code = args[0];
    if (!st.breaks.empty() && discover(code) < 0) return nullptr;
    if (!st.any_calls && !is_step_code(code)) return disable();
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
    if (!steps_through(args[0])) return disable();
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
    if (!wants_exceptions(args[0])) return disable();
    return exception_event(args[0], args[2]);
}

PyObject* on_line(PyObject*, PyObject* const* args, Py_ssize_t) {
    State& st = state();
    if (!st.armed) return disable();
    PyObject* code = args[0];
    int line = PyLong_AsLong(args[1]);
    CodeInfo* info = code_info(code);
    if (!info) return nullptr;
    if (!info->is_bp_line(line) && !st.any_stepping && !is_step_code(code)) return disable();
    return deliver_line(code, line, Event::kLine);
}

// sys.settrace reports a backward jump to the start of the same line as a new "line" event
// (one-line loops); CPython's legacy tracer does it from JUMP, and so must we.
PyObject* on_jump(PyObject*, PyObject* const* args, Py_ssize_t) {
    State& st = state();
    if (!st.armed) return disable();
    PyObject* code = args[0];
    int from = PyLong_AsLong(args[1]);
    int to = PyLong_AsLong(args[2]);
    if (to > from) return disable();
    auto* co = reinterpret_cast<PyCodeObject*>(code);
    int to_line = PyCode_Addr2Line(co, to);
    if (to_line < 0 || to_line != PyCode_Addr2Line(co, from)) return disable();
    CodeInfo* info = code_info(code);
    if (!info) return nullptr;
    if (!info->is_bp_line(to_line) && !st.any_stepping && !is_step_code(code)) return disable();
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
    return 0;
}

int backend_reconfigure() {
    State& st = state();
    Monitoring& m = mon();
    if (m.tool < 0) return 0;
    int global = 0;
    std::vector<PyObject*> opcode_codes;
    if (st.armed) {
        if (!st.breaks.empty()) global |= bit(kPyStart) | bit(kPyResume);
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
        m.step_codes == st.step_codes && m.opcode_codes == opcode_codes)
        return 0;
    if (clear_locals() < 0) return -1;
    if (st.armed) {
        for (PyObject* code : st.step_codes)
            if (add_local(code, kStepLocal) < 0) return -1;
        for (PyObject* code : opcode_codes)
            if (add_local(code, bit(kInstruction)) < 0) return -1;
        if (!st.breaks.empty() && discover_running() < 0) return -1;
    }
    if (call_monitoring(m.set_events, nullptr, global) < 0) return -1;
    PyObject* r = PyObject_CallNoArgs(m.restart_events);
    if (!r) return -1;
    Py_DECREF(r);
    m.applied = true;
    m.generation = st.generation;
    m.global_events = global;
    m.step_codes = st.step_codes;
    m.opcode_codes = std::move(opcode_codes);
    return 0;
}

void backend_allow_gate(bool, bool, bool) {}

PyObject* backend_checker() {
    return nullptr;
}

}  // namespace dpdb::engine

#endif
