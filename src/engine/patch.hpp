// CPython 3.9-3.11: breakpoint checks compiled into a copy of a code object, so that a function
// holding a breakpoint runs untraced until the breakpoint line actually runs.
//
// Every original offset is kept: the first instruction(s) of each breakpoint line become a jump to
// a tail appended after the code; the tail asks its guard (condition_guard.hpp), calls the
// checker builtin unless the guard says the line's conditions are all false, runs the displaced
// instructions and jumps back. A backward jump into the middle of a breakpoint line (the end of a
// `for` loop's body, a `continue`: the interpreter reports the line there) becomes a jump site: the
// jump itself is displaced, and its tail asks the same guard and check, then jumps to the original
// target, where a trap resumes the frame. co_consts gain the checker, then one guard per site. The
// block stack (3.9/3.10) and the exception table (3.11) stay valid, frames can switch between the
// original and the patched code wherever they are outside the displaced spans, and the tail maps to
// the breakpoint line in the line table.
#pragma once

#include <Python.h>

#if PY_VERSION_HEX < 0x030C0000

#include <vector>

namespace dpdb::engine {

struct Site {
    int line = 0;
    int start = 0;       // first displaced code unit; the jump to the tail sits here
    int end = 0;         // first code unit after the displaced span: where the tail returns
    int tail_start = 0;  // first code unit of this site's tail
    int tail_end = 0;
    int after_call = 0;  // code unit of the tail's POP_TOP, right after the checker call
    // Where a trap resumes the frame: `start` (the frame runs the site again, and the check
    // knows the line was delivered), or for a jump site the displaced jump's target.
    int resume = 0;
    // A loop header whose jump at the line's start is wide enough to cover its FOR_ITER: the
    // tail runs that FOR_ITER (`loop`, its original unit) and goes on to `loop_next` (the unit
    // after it) or `loop_exit`. A jump site back to that FOR_ITER runs it in its tail too, and
    // its trap resumes the frame there.
    int loop = -1;
    int loop_next = 0;
    int loop_exit = 0;
    bool quiet_end = true;  // the tail's jump back to `end` makes a line event the tracer ignores
    bool is_jump() const { return resume != start; }
};

// Owned by the patched code object (in its CodeInfo).
struct Patch {
    PyObject* original = nullptr;  // strong
    int code_units = 0;            // length of the original code
    std::vector<Site> sites;       // ordered by start (and so by tail_start)
    std::vector<int> lines;        // every line of the original code that holds an instruction

    ~Patch() { Py_XDECREF(original); }
    const Site* site_in_tail(int unit) const;
    bool in_span(int unit) const;  // inside a displaced span (the jump or its padding)
    bool in_tail(int unit) const { return unit >= code_units; }
    bool is_resume_point(int unit) const;
};

// Loads what the patcher needs from the `opcode` module; `checker` is the builtin the tails call.
int patch_init(PyObject* checker);

// code.replace(**kwargs): a new reference, null with an exception set.
PyObject* replace_code(PyObject* code, PyObject* kwargs);

// Lines of `code` that hold at least one instruction, sorted. Returns -1 with an exception set.
int code_lines(PyObject* code, std::vector<int>& lines);

// A copy of `code` with a check at every line in `bp_lines` (sorted, all lines of `code`);
// *patch describes it. Null without an exception set when that cannot be done safely, with one
// on failure. `grow_stack` lets the copy have a larger co_stacksize than `code` where the
// checker call needs it: such a copy is only for frames created from it (3.11 swap mode), as a
// frame made for `code` has no room for it.
PyObject* build_patched(PyObject* code, const std::vector<int>& bp_lines, Patch** patch,
                        bool grow_stack = false);

}  // namespace dpdb::engine

#endif
