// CPython 3.11: which code swap mode (swap.cpp) gives the functions of each original code tree,
// the copies it made, and the way back from a copy (or from code the program derived from one)
// to the user's code.
#include <Python.h>

#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000

#include <unordered_map>
#include <vector>

#include "engine/condition_guard.hpp"
#include "engine/engine.hpp"
#include "engine/legacy.hpp"
#include "engine/patch.hpp"

namespace dpdb::engine {

thread_local bool g_in_swap_code = false;

namespace {

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

}  // namespace

PyObject* original_of(PyObject* code) {
    auto it = g_origin.find(code);
    if (it != g_origin.end()) return it->second;
    const CodeInfo* info = stored_info(code);
    if (!info || !info->patch) return code;
    PyObject* base = info->patch->original;
    it = g_origin.find(base);
    return it != g_origin.end() ? it->second : base;
}

CodeInfo* peek_info(PyObject* code) {
    CodeInfo* info = stored_info(code);
    return info && info->generation == state().generation ? info : nullptr;
}

namespace {

PyObject* replace_consts(PyObject* code, PyObject* consts) {
    PyObject* kwargs = Py_BuildValue("{sO}", "co_consts", consts);
    PyObject* copy = kwargs ? replace_code(code, kwargs) : nullptr;
    Py_XDECREF(kwargs);
    return copy;
}

}  // namespace

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

PyObject* swapped_original(PyObject* code) {
    auto it = g_origin.find(code);
    return it != g_origin.end() ? it->second : nullptr;
}

void forget_copies() {
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
}

// A code object made from a patched copy by the program (`f.__code__.replace(...)` while `f` is
// swapped, or a frame's f_code) holds the tails without knowing them: the checker would do
// nothing in it and the jump back from a tail would report its line a second time. It gets the
// description of the copy it came from, with the program's own code minus the checks as its
// original.
int adopt_derived(PyObject* code, CodeInfo* info) {
    PyObject* consts = reinterpret_cast<PyCodeObject*>(code)->co_consts;
    // A patched copy's co_consts end with the checker and then its guards (patch.hpp).
    Py_ssize_t n = PyTuple_GET_SIZE(consts);
    while (n > 0 && is_condition_guard(PyTuple_GET_ITEM(consts, n - 1))) --n;
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

}  // namespace dpdb::engine

#endif
