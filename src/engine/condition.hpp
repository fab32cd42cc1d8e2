// Breakpoint conditions answered in the engine: at a breakpoint line with a condition, the
// engine does what bdb.effective() does (hits, conditions, ignore counts) in the frame itself,
// and bdb hears of the event only when a breakpoint stops there (a condition true or raising).
// Otherwise each hit costs what bdb costs: a locals mapping of the whole frame, a call into
// Python, effective() compiling the condition anew.
//
// pdb's Breakpoint objects stay the truth: enabled, funcname, cond, hits and ignore are read
// (or checked unchanged) at every hit, so `condition N`, `ignore N`, `disable` and `enable` take
// effect at once. A line the engine cannot do all of (a breakpoint by function name, a condition
// beyond it) is bdb's alone, and one with plain breakpoints only too, but while one's
// ignore count runs (the engine counts it down, each hit a line event answered in C). When a
// breakpoint stops, bdb's effective() is given the engine's answer (python/dpdb/_engine.py), so
// that no condition runs twice: a condition with a side effect (dpdb pause's) sees each hit once,
// as under pdb.
//
// A condition is evaluated as bdb's eval(cond, f_globals, f_locals) does, with only the frame's
// variables the condition names, read from the frame's fast locals and cells: while all are bound
// as the arguments of `lambda <names>: (cond)`, else as a mapping of the bound ones (f_locals
// leaves an unbound one out, and the global of that name answers). A condition that could see the
// difference (locals(), vars(), dir(), eval(), exec(), an assignment expression, a variable of a
// comprehension inlined into the frame) is bdb's. A simple condition (comparisons of variables
// and constants) is answered in C where its values allow (condition_fast.hpp); where every
// condition of a line is such and false, the hits are counted in C (BreakpointSnapshot::pending)
// and written to the Breakpoints before bdb or pdb reads them (conditions_flush_hits).
#pragma once

#include <Python.h>
#include <frameobject.h>

#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

#include "engine/breakpoint_snapshot.hpp"

namespace dpdb::engine {

struct FastCondition;  // condition_fast.hpp
struct CodeInfo;       // engine.hpp

// Where one code object keeps the frame's variables that each condition names (kept with the
// code's CodeInfo for the code's life: it depends on the code and the condition only).
struct ConditionSlots {
    struct Slot {
        PyObject* name;  // borrowed from the compiled condition, which lives as long as the engine
        int index;       // into the frame's fast locals, cells and free variables
        bool cell;       // the slot may hold a cell whose content is the value
    };
    PyObject* compiled = nullptr;  // borrowed, as `name`
    bool usable = false;           // false: a variable the engine cannot read the way f_locals does
    std::vector<Slot> slots;
    // The condition as `lambda <the slots' names>: (cond)` (strong; null where that could differ
    // from eval: a condition with scopes of its own), made into a function for the globals of the
    // frames that run it: called while every slot is bound, it costs a call, not a mapping and an
    // eval.
    bool wrapper_tried = false;
    PyObject* wrapper = nullptr;
    PyObject* function = nullptr;
    // The condition answered in C where its values allow (condition_fast.hpp), or null.
    bool fast_tried = false;
    FastCondition* fast = nullptr;
};
// One breakpoint line of a code object: bdb.Breakpoint.bplist's list there (strong) and a
// snapshot of each of its breakpoints.
struct ConditionLine {
    int line = 0;
    PyObject* list = nullptr;
    std::deque<BreakpointSnapshot> snapshots;
    ConditionLine(int at, PyObject* found) : line(at), list(found) {}
    ConditionLine(const ConditionLine&) = delete;
    ConditionLine& operator=(const ConditionLine&) = delete;
    ~ConditionLine() { Py_XDECREF(list); }
};
struct ConditionCache {
    std::deque<ConditionSlots> entries;  // a deque: a reference stays valid while one is added
    // This code's breakpoint lines, valid for one generation of breakpoints (engine.hpp's
    // State::generation); `epoch` counts the changes of `lines`, which another thread may make
    // while a condition runs.
    std::uint64_t generation = 0;
    std::uint64_t epoch = 0;
    std::deque<ConditionLine> lines;
    ConditionLine* last = nullptr;  // of `lines`, the one found last
    ~ConditionCache();
};

// Whether the engine answers conditions at all (DPDB_ENGINE=nocond turns it off).
void conditions_allow(bool on);

// For a line event at `line` of `frame` that bdb would receive only to look for a breakpoint
// (nobody steps to it): true when the engine answered it and bdb need not hear of it (every
// enabled breakpoint there false or disabled, hits and ignore counts changed as bdb.effective()
// changes them). False when bdb must hear of it: with the engine's verdict kept for bdb's
// effective() (take_verdict) when it evaluated the conditions and one stops, else with nothing
// evaluated or changed (a breakpoint by function name, no condition, a condition beyond the
// engine). `info` is the code's CodeInfo for this generation of breakpoints. Called with no
// exception set (as at every line event); returns true with one set when a condition raised one
// that is no Exception (raise_escaping): the caller raises it in the program.
bool conditions_false(PyFrameObject* frame, PyObject* code, CodeInfo* info, int line);
// What a caller that returns None to the interpreter returns once conditions_false answered
// true: None, or null with the exception a condition raised for the program.
inline PyObject* none_unless_raised() {
    if (PyErr_Occurred()) return nullptr;
    Py_RETURN_NONE;
}

// The same from what the engine knows already, for `info`'s code running in `view`: true when
// this generation's snapshots of the line's breakpoints are current and every enabled one has a
// condition answered in C and false there (its hit counted); false, with nothing changed, for
// anything else. No Python code runs and no attribute is read: a patched tail's guard asks it
// (condition_guard.hpp).
struct FrameView;  // condition_eval.hpp
bool conditions_false_known(const FrameView& view, CodeInfo* info, int line);

// The verdict kept for bdb, as bdb.effective(file, line, frame) returns it, if it is for this
// frame and line (then it is given once), else None. New reference.
PyObject* take_verdict(PyObject* frame, int line);
// Writes the hits counted in C to their breakpoints (`hits += n`): before bdb or pdb reads them.
void conditions_flush_hits();

// Drops the verdict bdb did not take (the line's event went to bdb and back).
void conditions_forget();

#if PY_VERSION_HEX >= 0x030B0000
// The same for the frame running `code` on this thread (a sys.monitoring callback's, 3.11's
// check's caller), read without its frame object, which need not be made for an event that goes
// no further. Module and class bodies are left to the caller. An exception set as above.
bool conditions_false_running(PyObject* code, CodeInfo* info, int line);
// conditions_false_known for that frame: a sys.monitoring callback's first try.
bool conditions_false_known_running(PyObject* code, CodeInfo* info, int line);
#endif

}  // namespace dpdb::engine
