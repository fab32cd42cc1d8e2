// CPython 3.9-3.11: the engine as a C trace function (PyEval_SetTrace semantics), installed only
// while something is armed. Calls are answered from the per-code cache; frames that bdb would not
// trace get f_trace_lines = 0, so the interpreter stops reporting their lines.
//
// Any trace function makes these interpreters several times slower on call-heavy code, so while
// only breakpoints are armed (nobody steps) a PEP 523 frame evaluator gates it: a thread is traced
// only while a frame whose file holds a breakpoint runs, and nested calls into other files run
// untraced. Stepping falls back to tracing every thread, as bdb does.
#include <Python.h>

#if PY_VERSION_HEX < 0x030C0000

#include "engine/engine.hpp"
#include "engine/frame_access.hpp"

namespace dpdb::engine {
namespace {

#if PY_VERSION_HEX >= 0x030B0000
// Head of 3.11's private _PyInterpreterFrame, up to the fields the gate reads.
struct InterpreterFrameHead {
    PyObject* f_func;
    PyObject* f_globals;
    PyObject* f_builtins;
    PyObject* f_locals;
    PyCodeObject* f_code;
    PyFrameObject* frame_obj;
};
using EvalFrame = struct _PyInterpreterFrame*;
PyObject* eval_code(EvalFrame f) {
    return reinterpret_cast<PyObject*>(reinterpret_cast<InterpreterFrameHead*>(f)->f_code);
}
PyFrameObject* eval_frame_object(EvalFrame f) {
    return reinterpret_cast<InterpreterFrameHead*>(f)->frame_obj;
}
#else
using EvalFrame = PyFrameObject*;
PyObject* eval_code(EvalFrame f) {
    return reinterpret_cast<PyObject*>(f->f_code);
}
PyFrameObject* eval_frame_object(EvalFrame f) {
    return f;
}
#endif

bool g_gate_allowed = true;  // the strategy may forbid PEP 523
bool g_gate = false;         // the gate decides which frames run traced
bool g_gate_installed = false;
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
            int line = PyFrame_GetLineNumber(frame);
            PyObject* code = borrowed_code(frame);
            if (!st.any_nontrivial && !frame_trace(frame)) {
                CodeInfo* info = code_info(code);
                if (!info) return -1;
                if (!info->is_bp_line(line)) return 0;
            }
            return handle(frame, code, Event::kLine, Py_None, line);
        }
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

PyObject* gate_eval(PyThreadState* ts, EvalFrame f, int throwflag) {
    if (!g_gate || (ts->c_tracefunc && ts->c_tracefunc != tracer))
        return _PyEval_EvalFrameDefault(ts, f, throwflag);
    CodeInfo* info = code_info(eval_code(f));
    if (!info) return nullptr;
    PyFrameObject* fo = eval_frame_object(f);
    bool want = info->in_bp_file || (fo && frame_trace(fo));
    bool on = ts->c_tracefunc == tracer;
    if (want == on) return _PyEval_EvalFrameDefault(ts, f, throwflag);
    if (set_trace(ts, want) < 0) return nullptr;
    PyObject* result = _PyEval_EvalFrameDefault(ts, f, throwflag);
    if (g_gate && (ts->c_tracefunc == tracer) != on) {
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        if (set_trace(ts, on) < 0) PyErr_Clear();
        PyErr_Restore(type, value, tb);
    }
    return result;
}

void install_gate(bool on) {
    if (on == g_gate_installed) return;
    PyInterpreterState* interp = PyThreadState_Get()->interp;
    _PyInterpreterState_SetEvalFrameFunc(interp, on ? gate_eval : _PyEval_EvalFrameDefault);
    g_gate_installed = on;
}

// A thread already running a frame whose file now holds a breakpoint must stay traced until that
// frame returns, because the gate only sees frames as they start.
int runs_breakpoint_file(PyThreadState* ts, bool* result) {
    *result = false;
    PyFrameObject* f = PyThreadState_GetFrame(ts);
    while (f) {
        PyObject* code = reinterpret_cast<PyObject*>(PyFrame_GetCode(f));
        CodeInfo* info = code_info(code);
        Py_DECREF(code);
        if (!info) {
            Py_DECREF(f);
            return -1;
        }
        if (info->in_bp_file) {
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
    return g_thread_hook ? 0 : -1;
}

void backend_allow_gate(bool allowed) {
    g_gate_allowed = allowed;
}

int backend_reconfigure() {
    State& st = state();
    bool gate = st.armed && g_gate_allowed && !st.any_nontrivial && !st.any_calls;
    g_gate = gate;
    install_gate(gate);
    if (set_thread_hook(st.armed && !gate) < 0) return -1;
    PyInterpreterState* interp = PyThreadState_Get()->interp;
    for (PyThreadState* ts = PyInterpreterState_ThreadHead(interp); ts;
         ts = PyThreadState_Next(ts)) {
        if (ts->c_tracefunc && ts->c_tracefunc != tracer) continue;
        bool want = st.armed;
        if (gate && runs_breakpoint_file(ts, &want) < 0) return -1;
        if (want != (ts->c_tracefunc == tracer) && set_trace(ts, want) < 0) return -1;
    }
    if (st.armed) unsilence_traced_frames();
    return 0;
}

}  // namespace dpdb::engine

#endif
