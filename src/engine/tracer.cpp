// CPython 3.9-3.11: the engine as a C trace function (PyEval_SetTrace semantics), installed only
// while something is armed. Calls are answered from the per-code cache; frames that bdb would not
// trace get f_trace_lines = 0, so the interpreter stops reporting their lines.
//
// Any trace function makes these interpreters several times slower on call-heavy code, so while
// only breakpoints are armed (nobody steps) the PEP 523 gate (gate.cpp) keeps it off the frames
// that do not need it; stepping traces every thread, as bdb does.
#include <Python.h>

#if PY_VERSION_HEX < 0x030C0000

#include "engine/condition_guard.hpp"
#include "engine/engine.hpp"
#include "engine/frame_access.hpp"
#include "engine/greenlets.hpp"
#include "engine/legacy.hpp"
#include "engine/patch.hpp"

namespace dpdb::engine {

thread_local bool t_switching_trace = false;

namespace {

PyObject* g_thread_hook = nullptr;  // builtin given to threading.settrace
PyObject* g_threading = nullptr;
bool g_hook_installed = false;

}  // namespace

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

namespace {
// Whether `f` (a new reference, taken) or a frame that called it holds a breakpoint without its
// check.
int chain_needs_tracing(PyFrameObject* f, bool* result) {
    *result = false;
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

// Whether a suspended greenlet's frames hold a breakpoint without its check.
int greenlets_need_tracing(bool* result) {
    *result = false;
    PyObject* frames = suspended_greenlet_frames();
    if (!frames) return -1;
    int rc = 0;
    for (Py_ssize_t i = 0; rc == 0 && !*result && i < PyList_GET_SIZE(frames); ++i) {
        auto* frame = reinterpret_cast<PyFrameObject*>(PyList_GET_ITEM(frames, i));
        Py_INCREF(frame);
        rc = chain_needs_tracing(frame, result);
    }
    Py_DECREF(frames);
    return rc;
}
}  // namespace

// A thread running a frame whose code holds a breakpoint without its check (it was already
// running when the breakpoint was set) must stay traced until that frame returns, because the
// gate only sees frames as they start or resume.
int needs_tracing(PyThreadState* ts, bool* result) {
    return chain_needs_tracing(PyThreadState_GetFrame(ts), result);
}

namespace {

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
    swap_init();
#endif
    if (condition_guard_init() < 0) return -1;
    return patch_init(g_checker);
}

void backend_allow(const Mechanisms& allowed) {
    g_gate_allowed = allowed.gate;
    g_patch_allowed = allowed.gate && allowed.patch;
    condition_guard_allow(allowed.guard);
#if PY_VERSION_HEX >= 0x030B0000
    swap_allow(g_patch_allowed && allowed.swap);
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
    // A suspended greenlet's frame that needs tracing resumes in a thread not known here: every
    // thread is traced then.
    bool greenlet_wants = false;
    if (gate && st.armed && greenlets_need_tracing(&greenlet_wants) < 0) return -1;
    PyInterpreterState* interp = PyThreadState_Get()->interp;
    for (PyThreadState* ts = PyInterpreterState_ThreadHead(interp); ts;
         ts = PyThreadState_Next(ts)) {
        if (ts->c_tracefunc && ts->c_tracefunc != tracer) continue;
        bool want = st.armed;
        if (gate && needs_tracing(ts, &want) < 0) return -1;
        want = want || greenlet_wants;
        if (want != (ts->c_tracefunc == tracer) && set_trace(ts, want) < 0) return -1;
    }
    if (st.armed) unsilence_traced_frames();
    return 0;
}

}  // namespace dpdb::engine

#endif
