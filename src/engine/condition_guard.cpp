#include "engine/condition_guard.hpp"

#include <new>

#include "engine/condition.hpp"
#include "engine/condition_eval.hpp"
#if PY_VERSION_HEX < 0x030C0000
#include "engine/legacy.hpp"
#else
#include "engine/frame_access.hpp"
#endif

namespace dpdb::engine {
namespace {

bool g_allowed = true;

struct Guard {
    PyObject_HEAD int line;
    int start;  // the site's first code unit, where a frame resumes after the line's trap
#if PY_VERSION_HEX >= 0x030C0000
    FastSite site;
    PyObject* code;  // condition_guard_bind's
    CodeInfo* info;
#endif
};

#if PY_VERSION_HEX >= 0x030C0000
// 1 (the slow replica: its line event decides) or 0 (the fast one: every condition of the line
// false, its hit counted; or a tool's callback runs, where CPython sends no line event).
int guard_truth(PyObject* self) {
    const Guard* guard = reinterpret_cast<Guard*>(self);
    PyThreadState* ts = PyThreadState_Get();
    if (ts->tracing) return 0;
    if (!state().armed || state().any_nontrivial) return 1;
    InterpreterFrameHead* running = running_frame(ts);
    // Code the program derived from the copy (code.replace) has its own CodeInfo, and its line
    // events decide.
    if (!running || !guard->info || running->pointers[kFrameCode] != guard->code) return 1;
    const FrameView view{running->localsplus,
                         static_cast<PyObject*>(running->pointers[kFrameGlobals]), nullptr};
    if (!conditions_false_known(view, guard->info, guard->line)) return 1;
    ++state().conditions_guarded;
    return 0;
}
#else
// 1 (call the check) or 0 (every condition of the line false, its hit counted).
int guard_truth(PyObject* self) {
    const Guard* guard = reinterpret_cast<Guard*>(self);
    const int line = guard->line;
    PyThreadState* ts = PyThreadState_Get();
    // What the check would leave to a trap or to a tracer's line event, it is given.
    if (!state().armed || state().any_nontrivial || ts->tracing || ts->c_tracefunc ||
        t_switching_trace)
        return 1;
#if PY_VERSION_HEX >= 0x030B0000
    EvalFrame running = ts->cframe->current_frame;
    if (!running) return 1;
    PyObject* code = eval_code(running);
    PyFrameObject* frame = eval_frame_object(running);  // null until something made it
#else
    PyFrameObject* frame = ts->frame;
    if (!frame) return 1;
    PyObject* code = reinterpret_cast<PyObject*>(frame->f_code);
#endif
    // A line event the engine delivered there already (a trap sprung, the frame resumed at the
    // site's start): the check that follows knows not to repeat it. A jump site's frame resumes
    // at the jump's target instead, and never matches.
    if (frame && g_seen.frame == frame && g_seen.unit == guard->start) return 1;
    // The line's breakpoints as the check last found them this generation: a line of none is
    // not among them.
    CodeInfo* info = known_code_info(code);
    if (!info || !info->patch) return 1;
#if PY_VERSION_HEX >= 0x030B0000
    if (!conditions_false_known_running(code, info, line)) return 1;
#else
    if (!conditions_false_known(FrameView{frame_localsplus(frame), frame->f_globals, frame}, info,
                                line))
        return 1;
#endif
    ++state().conditions_guarded;
    return 0;
}
#endif

void guard_dealloc(PyObject* self) {
    PyTypeObject* type = Py_TYPE(self);
    type->tp_free(self);
    Py_DECREF(type);  // instances of a heap type hold it
}

PyType_Slot g_slots[] = {
    {Py_nb_bool, reinterpret_cast<void*>(guard_truth)},
    {Py_tp_dealloc, reinterpret_cast<void*>(guard_dealloc)},
    {Py_tp_doc,
     const_cast<char*>("The truth of a breakpoint line's conditions, asked by patched code.")},
    {0, nullptr},
};
PyType_Spec g_spec = {"dpdb._engine_native.ConditionGuard", sizeof(Guard), 0, Py_TPFLAGS_DEFAULT,
                      g_slots};
PyTypeObject* g_type = nullptr;  // strong, for the process's life

}  // namespace

int condition_guard_init() {
    if (!g_type) g_type = reinterpret_cast<PyTypeObject*>(PyType_FromSpec(&g_spec));
    return g_type ? 0 : -1;
}

void condition_guard_allow(bool on) {
    g_allowed = on;
}

bool condition_guard_allowed() {
    return g_allowed;
}

PyObject* new_condition_guard(int line, int start) {
    Guard* guard = PyObject_New(Guard, g_type);
    if (guard) {
        guard->line = line;
        guard->start = start;
#if PY_VERSION_HEX >= 0x030C0000
        guard->code = nullptr;
        guard->info = nullptr;
#endif
    }
    return reinterpret_cast<PyObject*>(guard);
}

bool is_condition_guard(PyObject* object) {
    return g_type && Py_TYPE(object) == g_type;
}

#if PY_VERSION_HEX >= 0x030C0000
PyObject* new_fast_copy_guard(const FastSite& site) {
    PyObject* guard = new_condition_guard(site.line, site.start);
    if (guard) new (&reinterpret_cast<Guard*>(guard)->site) FastSite(site);
    return guard;
}

const FastSite& condition_guard_site(PyObject* guard) {
    return reinterpret_cast<Guard*>(guard)->site;
}

void condition_guard_bind(PyObject* guard, PyObject* code, CodeInfo* info) {
    reinterpret_cast<Guard*>(guard)->code = code;
    reinterpret_cast<Guard*>(guard)->info = info;
}
#endif

}  // namespace dpdb::engine
