// CPython 3.11: swap mode.
//
// On 3.11 any PEP 523 evaluator costs the interpreter its inlined Python-to-Python calls, so
// while only breakpoints are armed the gate is avoided when that is safe: every function whose
// code (or a code object nested in its co_consts) holds a breakpoint gets, through its __code__,
// a copy of that tree whose breakpoint lines have their checks compiled in, and no evaluator is
// installed. That is safe only while no frame can still run, or make functions from, the
// original code: no live frame or suspended generator runs an original tree that needs patching,
// and new code objects of breakpoint files (exec, compile, code.__new__: an audit hook) put the
// gate back at once; it hands the work back to swap mode after a rescan.

#include <Python.h>

#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000

#include <algorithm>
#include <chrono>
#include <cstring>
#include <unordered_map>

#include "engine/engine.hpp"
#include "engine/frame_access.hpp"
#include "engine/legacy.hpp"
#include "engine/patch.hpp"

namespace dpdb::engine {

bool g_swap = false;
bool g_rescan_pending = false;
std::uint32_t g_rescan_ticks = 0;

namespace {

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

}  // namespace

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

namespace {

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

}  // namespace

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

namespace {

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

}  // namespace

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

void swap_init() {
    // Once per process: a hook cannot be removed, so it returns at once outside swap mode.
    if (PySys_AddAuditHook(audit_hook, nullptr) == 0) {
        g_audit_hook = true;
    } else {
        PyErr_Clear();  // vetoed by another hook: no swap mode
    }
}

void swap_allow(bool allowed) {
    g_swap_allowed = allowed;
}

}  // namespace dpdb::engine

#endif
