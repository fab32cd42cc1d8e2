// Breakpoint conditions answered in the engine: at a breakpoint line where every enabled
// breakpoint has a condition, the engine evaluates the conditions in the frame itself, and bdb
// hears of the event only when one of them is true or raises. Otherwise each hit costs what bdb
// costs: a locals mapping of the whole frame, a call into Python, effective() compiling the
// condition anew.
//
// pdb's Breakpoint objects stay the truth: enabled, funcname and cond are read at every hit, so
// `condition N`, `disable` and `enable` take effect at once. When the engine answers, it counts
// the hits as bdb.effective() counts them (every enabled breakpoint, true condition or not); when
// it cannot answer, it leaves everything to bdb, which evaluates the conditions again.
//
// A condition is evaluated as bdb's eval(cond, f_globals, f_locals) does, with a mapping of only
// the frame's variables the condition names, read from the frame's fast locals and cells: LOAD_NAME
// finds the same values, and an unbound variable falls back to the globals as it does in
// f_locals. A condition that could see the difference (locals(), vars(), dir(), eval(), exec(),
// an assignment expression) goes to bdb.
#pragma once

#include <Python.h>
#include <frameobject.h>

#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

namespace dpdb::engine {

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
};
struct ConditionCache {
    std::deque<ConditionSlots> entries;  // a deque: a reference stays valid while one is added
    // The bdb.Breakpoint.bplist lists of this code's breakpoint lines (strong), valid for one
    // generation of breakpoints (engine.hpp's State::generation).
    std::uint64_t generation = 0;
    std::vector<std::pair<int, PyObject*>> lines;
    ~ConditionCache();
};

// What the engine reads of a running frame: its fast locals (frame_access.hpp) and globals
// (borrowed), and its frame object when there is one (needed for module and class bodies only).
struct FrameView {
    PyObject** localsplus;
    PyObject* globals;
    PyFrameObject* frame;
};
bool conditions_false(const FrameView& view, PyObject* code, int line);

// Whether the engine answers conditions at all (DPDB_ENGINE=nocond turns it off).
void conditions_allow(bool on);

// For a line event at `line` of `frame` that bdb would receive only to look for a breakpoint
// (nobody steps to it): true when every enabled breakpoint there has a condition that is false
// now, the hits then counted as bdb counts them, so that bdb need not hear of the event. False
// when bdb must decide (a breakpoint without condition or by function name, a condition true,
// raising or beyond the engine), with nothing changed. Called, and returns, with no exception
// set (as at every line event).
bool conditions_false(PyFrameObject* frame, PyObject* code, int line);

#if PY_VERSION_HEX >= 0x030C0000
// The same for the frame running `code` on this thread (a sys.monitoring callback's), read
// without its frame object, which need not be made for an event that goes no further. Module and
// class bodies are left to the caller.
bool conditions_false_running(PyObject* code, int line);
#endif

}  // namespace dpdb::engine
