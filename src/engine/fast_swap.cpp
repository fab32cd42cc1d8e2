// CPython 3.12+: which functions run a fast copy (fast_copy.hpp).
//
// At every change of breakpoints (a new generation) the functions given copies get their
// original code back, and a heap scan gives every function whose code holds a line with a
// conditional breakpoint that can take a tail its copy, through its `__code__` setter (set_code:
// calls to it specialise again, on 3.13 too). A copy's constants hold the copies of the code
// objects it makes functions of (closures, generator expressions, lambdas, nested functions), so
// those made by a function running its copy run copies too. Frames already running keep the code
// they run, and functions made from an original (by module code, or a frame that started before)
// run it with its line events: slower, never wrong. While breakpoints are disarmed, no function
// keeps one.
#include <Python.h>

#if PY_VERSION_HEX >= 0x030C0000

#include <unordered_map>
#include <vector>

#include "engine/condition_guard.hpp"
#include "engine/engine.hpp"
#include "engine/fast_copy.hpp"
#include "engine/monitoring.hpp"

#if PY_VERSION_HEX >= 0x030D0000 && PY_VERSION_HEX < 0x030E0000
extern "C" PyAPI_FUNC(void) _PyFunction_SetVersion(PyFunctionObject* func, uint32_t version);
#endif

namespace dpdb::engine {
namespace {

// `function.__code__ = code`. 3.13 takes the function's version away there for good (3.12 hands
// out a new one when a call site next specialises), so no call of it would specialise again
// (fib: 1.27x, measured with code.replace() and nothing else). MAKE_FUNCTION gives a function
// its code's co_version; so does this, where the function still had a version (nothing the
// program did to it, such as setting __defaults__, took it away). Returns -1 with an exception
// set.
int set_code(PyObject* function, PyObject* code) {
#if PY_VERSION_HEX >= 0x030D0000 && PY_VERSION_HEX < 0x030E0000
    auto* fn = reinterpret_cast<PyFunctionObject*>(function);
    const uint32_t before = fn->func_version;
    if (PyObject_SetAttrString(function, "__code__", code) < 0) return -1;
    if (before != 0) _PyFunction_SetVersion(fn, reinterpret_cast<PyCodeObject*>(code)->co_version);
    return 0;
#else
    return PyObject_SetAttrString(function, "__code__", code);
#endif
}

struct Swapped {
    PyObject* function;  // strong
    PyObject* copy;      // strong: what the function was given
};

std::vector<Swapped> g_swapped;
std::uint64_t g_generation = 0;
// Every copy that may still run (strong): a frame keeps running the copy it started with after
// its function got another, and needs its events. One only this holds runs nowhere.
std::vector<PyObject*> g_live;

// Gives every function its code back, unless the program set another since.
void give_back() {
    std::vector<Swapped> swapped;
    swapped.swap(g_swapped);
    for (Swapped& s : swapped) {
        CodeInfo* info = static_cast<CodeInfo*>(code_extra(s.copy, state().extra_index));
        // A copy kept (the program refuses the change now) still runs as the code it copies.
        if (PyFunction_GET_CODE(s.function) == s.copy && info && info->fast &&
            info->fast->original && set_code(s.function, info->fast->original) < 0)
            PyErr_Clear();
        Py_DECREF(s.function);
        Py_DECREF(s.copy);
    }
}

// The copies' line events, which every reconfiguration takes back. Returns -1 with an exception
// set.
int give_events() {
    std::vector<PyObject*> live;
    for (PyObject* copy : g_live) {
        if (Py_REFCNT(copy) > 1)
            live.push_back(copy);
        else
            Py_DECREF(copy);
    }
    g_live.swap(live);
    if (!state().armed) return 0;
    for (PyObject* copy : g_live)
        if (add_break_events(copy) < 0) return -1;
    return 0;
}

// Whether one of these breakpoints (a bplist entry) is enabled and has a condition: 1, 0, or -1
// with an exception set. A plain breakpoint stops at every hit, where a copy only adds its tail.
int any_conditional(PyObject* breakpoints) {
    for (Py_ssize_t i = 0; PyList_Check(breakpoints) && i < PyList_GET_SIZE(breakpoints); ++i) {
        PyObject* bp = PyList_GET_ITEM(breakpoints, i);
        PyObject* cond = PyObject_GetAttrString(bp, "cond");
        PyObject* enabled = cond ? PyObject_GetAttrString(bp, "enabled") : nullptr;
        const int on = enabled ? PyObject_IsTrue(enabled) : -1;
        const int has = cond && on >= 0 ? PyObject_IsTrue(cond) : -1;
        Py_XDECREF(cond);
        Py_XDECREF(enabled);
        if (on < 0 || has < 0) return -1;
        if (on && has) return 1;
    }
    return 0;
}

// The lines of `lines` (a file's breakpoint lines) with a conditional breakpoint. Returns -1 with
// an exception set.
int conditional_lines(PyObject* canonic, const std::vector<int>& lines, std::vector<int>& found) {
    PyObject* bplist = PyObject_GetAttrString(state().breakpoint_class, "bplist");
    if (!bplist) return -1;
    int rc = 0;
    for (int line : lines) {
        PyObject* key = Py_BuildValue("(Oi)", canonic, line);
        PyObject* here = key ? PyDict_GetItemWithError(bplist, key) : nullptr;
        Py_XDECREF(key);
        const int has = here ? any_conditional(here) : (PyErr_Occurred() ? -1 : 0);
        if (has < 0) {
            rc = -1;
            break;
        }
        if (has) found.push_back(line);
    }
    Py_DECREF(bplist);
    return rc;
}

// Whether any breakpoint of any file has a condition (else no function needs a copy, and the
// heap scan is left out). Returns -1 with an exception set.
int any_conditional_breakpoint() {
    PyObject* bplist = PyObject_GetAttrString(state().breakpoint_class, "bplist");
    if (!bplist) return -1;
    int found = 0;
    Py_ssize_t pos = 0;
    PyObject *key, *breakpoints;
    while (found == 0 && PyDict_Check(bplist) && PyDict_Next(bplist, &pos, &key, &breakpoints))
        found = any_conditional(breakpoints);
    Py_DECREF(bplist);
    return found;
}

PyObject* copy_of(PyObject* code, std::unordered_map<PyObject*, PyObject*>& made);

// The constants of `code` with each code object that has a copy replaced by it, so that the
// functions the code makes at every run (closures, generator expressions, lambdas) run copies;
// null (a new reference otherwise) where none has one, or on failure with an exception set.
PyObject* nested_copies(PyObject* code, std::unordered_map<PyObject*, PyObject*>& made) {
    PyObject* consts = reinterpret_cast<PyCodeObject*>(code)->co_consts;
    PyObject* replaced = nullptr;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(consts); ++i) {
        PyObject* item = PyTuple_GET_ITEM(consts, i);
        PyObject* copy = PyCode_Check(item) ? copy_of(item, made) : nullptr;
        if (!copy) {
            if (PyErr_Occurred()) {
                Py_XDECREF(replaced);
                return nullptr;
            }
            continue;
        }
        if (!replaced) {
            if (!(replaced = PyTuple_New(PyTuple_GET_SIZE(consts)))) return nullptr;
            for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(consts); ++k)
                PyTuple_SET_ITEM(replaced, k, Py_NewRef(PyTuple_GET_ITEM(consts, k)));
        }
        Py_DECREF(PyTuple_GET_ITEM(replaced, i));
        PyTuple_SET_ITEM(replaced, i, Py_NewRef(copy));
    }
    return replaced;
}

// The copy of `code` for this generation, made once per code object (null: none, or failure
// with an exception set).
PyObject* copy_of(PyObject* code, std::unordered_map<PyObject*, PyObject*>& made) {
    auto known = made.find(code);
    if (known != made.end()) return known->second;
    PyObject* copy = nullptr;
    const std::vector<int>* lines = nullptr;
    auto* co = reinterpret_cast<PyCodeObject*>(code);
    CodeInfo* already = static_cast<CodeInfo*>(code_extra(code, state().extra_index));
    if (already && already->fast) {
        made.emplace(code, nullptr);  // a copy itself (a function the program gave one)
        return nullptr;
    }
    PyObject* canonic = nullptr;
    if (breaks_of_file(co->co_filename, &lines, &canonic) < 0) return nullptr;
    std::vector<int> conditional;
    if (lines && conditional_lines(canonic, *lines, conditional) < 0) return nullptr;
    PyObject* nested = lines ? nested_copies(code, made) : nullptr;
    if (!nested && PyErr_Occurred()) return nullptr;
    if (!conditional.empty() || nested) {
        FastCopy* described = nullptr;
        copy = build_fast_copy(code, conditional, nested, &described);
        Py_XDECREF(nested);
        if (copy) {
            CodeInfo* info = code_info(copy);
            if (!info) {
                delete described;
                Py_CLEAR(copy);
                return nullptr;
            }
            info->fast.reset(described);
            described->bind(copy, info);
            g_live.push_back(Py_NewRef(copy));
        } else if (PyErr_Occurred()) {
            // A copy is only faster: the function runs its own code, with its events.
            PyErr_WriteUnraisable(code);
        }
    }
    made.emplace(code, copy);  // the map holds the reference
    return copy;
}

}  // namespace

int fast_copies_update() {
    State& st = state();
    const bool wanted = st.armed && !st.breaks.empty() && condition_guard_allowed();
    if (wanted && g_generation == st.generation) return give_events();
    if (!wanted && g_swapped.empty()) return give_events();
    g_generation = st.generation;
    give_back();
    const int conditional = wanted ? any_conditional_breakpoint() : 0;
    if (conditional < 0) return -1;
    if (!conditional) return give_events();
    PyObject* objects = heap_objects();
    if (!objects) return -1;
    std::unordered_map<PyObject*, PyObject*> made;
    int rc = 0;
    for (Py_ssize_t i = 0; rc == 0 && i < PyList_GET_SIZE(objects); ++i) {
        PyObject* function = PyList_GET_ITEM(objects, i);
        if (!PyFunction_Check(function)) continue;
        PyObject* copy = copy_of(PyFunction_GET_CODE(function), made);
        if (!copy) {
            if (PyErr_Occurred()) rc = -1;
            continue;
        }
        if (set_code(function, copy) < 0) {
            // The program refused it (an audit hook on object.__setattr__): the function keeps
            // its code, and the line its events.
            PyErr_Clear();
            continue;
        }
        g_swapped.push_back({Py_NewRef(function), Py_NewRef(copy)});
    }
    Py_DECREF(objects);
    for (auto& [code, copy] : made) Py_XDECREF(copy);
    return rc < 0 ? rc : give_events();
}

}  // namespace dpdb::engine

#endif
