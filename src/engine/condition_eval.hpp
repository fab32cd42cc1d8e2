// Breakpoint conditions evaluated in a frame as bdb's eval(cond, f_globals, f_locals) sees them,
// without building f_locals (condition.hpp says how; condition.cpp decides when).
#pragma once

#include <Python.h>
#include <frameobject.h>

#include "engine/engine.hpp"

namespace dpdb::engine {

struct ConditionSlots;  // condition.hpp

// What the engine reads of a running frame: its fast locals (frame_access.hpp) and globals
// (borrowed), and its frame object if it has one (needed for module and class bodies only).
struct FrameView {
    PyObject** localsplus;
    PyObject* globals;
    PyFrameObject* frame;
};

// bdb's eval(cond, ...) of a string: leading blanks stripped, no compiler flags inherited (bdb
// has no future imports). Borrowed code object, or None where the engine leaves the condition to
// bdb; null with an exception set.
PyObject* compiled_condition(PyObject* cond);

// The code of `cond` (known already, or null) if the engine can evaluate it in this frame as bdb
// would (checked before anything is evaluated or counted, so that a line is either the engine's
// or bdb's), else null.
PyObject* evaluable(const FrameView& view, PyObject* code, CodeInfo* info, PyObject* cond,
                    PyObject* compiled);

// The truth of an evaluable condition (`compiled` its code) in the frame: 1, 0, or -1 when it
// raised (bdb's bare except), with no exception set. An exception that is no Exception
// (SystemExit from a signal handler, KeyboardInterrupt) is kept for raise_escaping.
int truth_of(const FrameView& view, PyObject* code, CodeInfo* info, PyObject* cond,
             PyObject* compiled);

// Sets the exception a condition kept (truth_of) and forgets it: true if there was one. Where
// bdb would swallow it and stop, dpdb raises it in the program, as the program would without a
// debugger (docs/architecture.md, "Conditions that raise").
bool raise_escaping();

// The variables `compiled` names in frames of `code` (an optimized one's: a function's), or null.
const ConditionSlots* slots_known(PyObject* code, CodeInfo* info, PyObject* compiled);

// The condition's truth answered in C (condition_fast.hpp) in the frame, once the condition ran
// through truth_of with all its variables bound: 1, 0, or -1 when it cannot tell (the caller
// evaluates it as truth_of does). Never sets an exception.
int fast_truth_in(const FrameView& view, const ConditionSlots& found);

}  // namespace dpdb::engine
