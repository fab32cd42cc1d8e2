// Breakpoint conditions evaluated in a frame as bdb's eval(cond, f_globals, f_locals) sees them,
// without building f_locals (condition.hpp says how; condition.cpp decides when).
#pragma once

#include <Python.h>
#include <frameobject.h>

#include "engine/engine.hpp"

namespace dpdb::engine {

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
// raised (bdb's bare except).
int truth_of(const FrameView& view, PyObject* code, CodeInfo* info, PyObject* cond,
             PyObject* compiled);

}  // namespace dpdb::engine
