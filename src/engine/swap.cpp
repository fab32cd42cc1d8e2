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
bool g_functions_swapped = false;  // some function may hold a copy: a restore has work to do
// Generation of the breakpoint-only mode (gate or swap) in force, 0 outside it.
std::uint64_t g_bp_mode_generation = 0;
std::int64_t g_rescan_due = 0;  // steady clock, ns
std::int64_t g_rescan_delay = 0;
constexpr std::int64_t kFirstRescanDelay = 200'000'000;
constexpr std::int64_t kLongestRescanDelay = 5'000'000'000;

std::int64_t steady_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
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
        // The program refused it (an audit hook on object.__setattr__): the function keeps its
        // code, which the check below finds, and the gate serves it.
        if (rc < 0) PyErr_Clear();
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
        PyObject* orig = swapped_original(PyFunction_GET_CODE(o));
        // Refused (an audit hook): the function keeps its copy, which stays known as one.
        if (orig && PyObject_SetAttrString(o, "__code__", orig) < 0) PyErr_Clear();
    }
    Py_XDECREF(objects);
    g_in_swap_code = guard;
    if (rc < 0) return -1;
    g_functions_swapped = false;
    forget_copies();
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
