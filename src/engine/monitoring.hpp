// CPython 3.12+: what the sys.monitoring backend (monitoring.cpp) and 3.12's scan mode (scan.cpp)
// share: the tool's events and its bookkeeping.
#pragma once

#include <Python.h>

#if PY_VERSION_HEX >= 0x030C0000

#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "engine/engine.hpp"
#include "engine/greenlets.hpp"

namespace dpdb::engine {

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
    bool scan = false;
    std::vector<PyObject*> step_codes;
    std::vector<PyObject*> opcode_codes;
    // Scan mode (scan.cpp). The strategy allows it; its code watcher and audit hook are in place.
    bool scan_allowed = true;
    bool scan_hooks = false;
    PyInterpreterState* interpreter = nullptr;
    // The breakpoint files (canonic, sorted) that scan_codes were collected for; while it is not
    // empty the hooks add what they see to scan_codes.
    std::vector<std::string> scan_files;
    // The breakpoint files whose scan found part of the heap frozen (not scanned again).
    std::vector<std::string> frozen_files;
    // Their code objects (strong): found by the last heap scan or seen by the hooks since.
    std::unordered_set<PyObject*> scan_codes;
    // 3.12: the strategy lets superinstructions be put back; a pending call to do it is queued.
    bool restore_allowed = true;
    bool restore_scheduled = false;
    // 3.12: code objects that lost events (answered DISABLE, or had their local events taken
    // back), strong, whose superinstructions are put back once CPython has taken the events out,
    // each with the code units of the lines whose event was taken out since.
    std::unordered_map<PyObject*, std::vector<int>> to_restore;
    // 3.12: code objects that ran while some session needed every call (strong). The global
    // events of a step instrumented them, and once those are switched off CPython takes them out
    // only at the code's next call, without a callback to restore after.
    std::unordered_set<PyObject*> ran_under_global_events;
};

inline Monitoring& mon() {
    static Monitoring m;
    return m;
}

// Adds `events` to the local events of `code`. Returns -1 with an exception set.
int add_local(PyObject* code, int events);
// The line and jump events of a code object of a breakpoint file (none for any other). Returns
// -1 with an exception set.
int add_break_events(PyObject* code);
// The same for code whose CodeInfo the caller holds already.
int add_break_events(PyObject* code, CodeInfo* info);

// Calls `visit` (returning -1 with an exception set to stop) with the code of `top` (borrowed)
// and of each frame that called it.
template <typename Visit>
int for_each_code_outwards(PyObject* top, Visit& visit) {
    PyFrameObject* f = reinterpret_cast<PyFrameObject*>(Py_NewRef(top));
    int rc = 0;
    while (f && rc == 0) {
        PyObject* code = reinterpret_cast<PyObject*>(PyFrame_GetCode(f));
        rc = visit(code);
        Py_DECREF(code);
        PyFrameObject* back = PyFrame_GetBack(f);
        Py_DECREF(f);
        f = back;
    }
    Py_XDECREF(f);
    return rc;
}

// Calls `visit` (returning -1 with an exception set to stop) with the code of every frame on
// every thread's stack and every suspended greenlet's.
template <typename Visit>
int for_each_running_code(Visit visit) {
    PyObject* frames = PyObject_CallNoArgs(mon().current_frames);
    if (!frames) return -1;
    PyObject* greenlets = suspended_greenlet_frames();
    if (!greenlets) {
        Py_DECREF(frames);
        return -1;
    }
    Py_ssize_t pos = 0;
    PyObject *tid, *top;
    int rc = 0;
    while (rc == 0 && PyDict_Next(frames, &pos, &tid, &top))
        rc = for_each_code_outwards(top, visit);
    for (Py_ssize_t i = 0; rc == 0 && i < PyList_GET_SIZE(greenlets); ++i)
        rc = for_each_code_outwards(PyList_GET_ITEM(greenlets, i), visit);
    Py_DECREF(greenlets);
    Py_DECREF(frames);
    return rc;
}

// ---- scan mode (scan.cpp) ----
// Adds scan mode's code watcher and audit hook, once per process.
void scan_init();
// Decides whether scan mode finds the code of breakpoint files from now on, and scans the heap
// when the set of breakpoint files changed. Returns -1 with an exception set.
int reconfigure_scan();
// Gives every code object scan mode found its line events. Returns -1 with an exception set.
int apply_scan_codes();

}  // namespace dpdb::engine

#endif
