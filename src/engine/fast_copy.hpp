// CPython 3.12+: a breakpoint line whose conditions are false costs no line event.
//
// sys.monitoring's LINE event costs the interpreter itself more than the goal allows on hot lines
// (bench/programs.py's line_event row: up to 1.17x before any tool runs). So the functions whose
// code holds breakpoint lines run a copy of it (their __code__, as 3.11's swap mode does) in which
// each entry of such a line jumps to a tail appended after the code:
//
//   start:  JUMP_FORWARD tail                  (the line's own first units; its event taken out)
//   tail:   LOAD_CONST <guard>; [TO_BOOL;] POP_JUMP_IF_FALSE fast          (no line)
//   slow:   <the displaced units>; JUMP_BACKWARD_NO_INTERRUPT end   (the line; the jump none)
//   fast:   <the displaced units>; JUMP_BACKWARD_NO_INTERRUPT end   (the line; the jump none)
//
// The guard (condition_guard.hpp) answers in C: false when every condition of the line is known
// false (its hits counted), so the frame takes the fast replica, which runs no event. Anything
// else takes the slow replica, a line start of its own whose LINE event is the line's event, so
// bdb gets it exactly as from the original code: stops, `j`, steps. While someone steps, the
// event at `start` is delivered instead and the frame then skips to the fast replica.
//
// A loop's backward jump onto a breakpoint line (`JUMP_BACKWARD target`: a `for` header's FOR_ITER
// reached from the body, or a one-line loop of a comprehension or generator expression, which
// sys.settrace reports as a new line from a JUMP event) gets a tail of its own, as its target
// cannot take one (FOR_ITER is a jump, and its GET_ITER reaches it from the same line):
//
//   jump:   JUMP_FORWARD tail                  (the jump's units)
//   tail:   LOAD_CONST <guard>; [TO_BOOL;] POP_JUMP_IF_FALSE fast          (no line)
//   slow:   JUMP_BACKWARD target                                           (the jump's line)
//   fast:   JUMP_BACKWARD target                                           (the target's line)
//
// The slow jump is the original: the target's event (LINE there, or the same-line JUMP) decides.
// The fast one lands from the target's own line, so no LINE event; its own first LINE and JUMP
// events, and the slow jump's first LINE event, are answered DISABLE. Where the jump is of the
// target's own line and nothing reaches the target from another line (a comprehension's or
// generator expression's loop), the target's LINE event is never the line's (the slow jump's JUMP
// event is), so the fast jump lands quietly:
//
//   fast:   JUMP_BACKWARD hop                                              (the target's line)
//   hop:    JUMP_BACKWARD_NO_INTERRUPT target                              (no line)
//
// (the hop placed before the fast jump, the eval-breaker check kept on a unit with a line). The
// landing from a unit with no line reports the target's LINE once, answered DISABLE: the target's
// INSTRUMENTED_LINE goes, and its FOR_ITER specialises again.
//
// A `for` header's FOR_ITER reached from its body (a jump of another line) keeps its LINE event
// as the line's only while the slow jump lands there from another line. Where every jump onto the
// target from another line is such a site (and nothing else reaches it but its own line), the
// slow way reports the line in the tail instead, and lands with no line, as the fast way does:
//
//   slow:   NOP                                                            (the target's line)
//           JUMP_BACKWARD target                                           (no line)
//   hop:    JUMP_BACKWARD_NO_INTERRUPT target                              (no line)
//   fast:   JUMP_BACKWARD hop                                              (the target's line)
//
// The NOP's LINE event is the line's (the guard before it has no line); the target's fires once,
// from either way, and answers DISABLE, so FOR_ITER specialises there too.
//
// Everything else in the copy is the original, frames running the original keep its events, and
// a line the copy cannot take (see build_fast_copy) keeps its event in the copy: the copy only
// ever takes events away where they would have answered nothing.
#pragma once

#include <Python.h>

#if PY_VERSION_HEX >= 0x030C0000

#include <vector>

namespace dpdb::engine {

struct FastSite {
    int line = 0;
    int start = 0;  // the entry's first code unit, where the jump to the tail sits
    int end = 0;    // the first unit after the displaced span
    int slow = 0;   // the slow replica's first unit
    int fast = 0;   // the fast replica's first unit
    // A loop's backward jump (above): start is the jump, end its target, slow and fast the
    // tail's two jumps, fast_end the unit after the fast one.
    bool jump = false;
    int fast_end = 0;
    // The fast jump lands through a hop with no line, so that the target's LINE event fires once
    // and answers DISABLE (only where it is never the line's event: lands_quietly in the .cpp).
    bool quiet = false;
    // A quiet site whose jump is of another line: its slow way reports the line on a NOP of the
    // target's line in the tail (slow), its jump with no line.
    bool reports = false;
};

// Owned by the copy's CodeInfo.
struct CodeInfo;

struct FastCopy {
    PyObject* original = nullptr;   // strong; null for code derived from a copy
    std::vector<FastSite> sites;    // ordered by start
    std::vector<PyObject*> guards;  // strong, bound to the copy while it lives

    ~FastCopy();
    // The copy is made: its guards learn it and its CodeInfo.
    void bind(PyObject* copy, CodeInfo* info) const;
    FastCopy() = default;
    FastCopy(const FastCopy&) = delete;
    FastCopy& operator=(const FastCopy&) = delete;
    enum class At { kNone, kStart, kSlow, kFast, kEnd };
    // Which part of which line entry's site the code unit `unit` begins, if any.
    At locate(int unit, const FastSite** site) const;
    // Whether `unit` is in the fast jump of a loop's backward jump site, whose events answer
    // DISABLE.
    bool in_fast_jump(int unit) const;
    // Whether `unit` is in a loop's backward jump site's slow or fast jump (or hop), whose LINE
    // events answer DISABLE: the slow jump's line had its event already, or its JUMP event is
    // the line's.
    bool in_jump_tail(int unit) const;
    // Whether `unit` is the target of a loop's backward jump site that lands quietly, whose LINE
    // event answers DISABLE: the site's slow jump gives the line's event (a same-line JUMP).
    bool lands_quietly_at(int unit) const;
};

// Loads what the builder needs from the `opcode` module. Returns -1 with an exception set.
int fast_copy_init();

// A copy of `code` with a tail for every entry of the lines in `bp_lines` (sorted) that can take
// one, or null when none can (no exception) or on failure (an exception set). *copy describes it.
// `nested` (borrowed, or null): the constants the copy gets instead of the code's own, where the
// code objects of functions it makes (closures, generator expressions, lambdas) are copies; with
// it a copy is made even when no line can take a tail.
PyObject* build_fast_copy(PyObject* code, const std::vector<int>& bp_lines, PyObject* nested,
                          FastCopy** copy);

// Whether build_fast_copy is making one now: scan mode's code watcher leaves the copy to
// fast_swap.cpp, which gives it its events after every reconfiguration.
bool making_fast_copy();

// The description of code the program derived from a fast copy (code.replace keeps its tails and
// guards), read from its guards; null for any other code. Its guards stay bound to their copy, so
// they always send the frame the slow way, whose events decide as in the copy.
FastCopy* fast_copy_derived(PyObject* code);

// fast_swap.cpp: after every reconfiguration, the functions that run a copy for this generation
// of breakpoints (none while disarmed). Returns -1 with an exception set.
int fast_copies_update();

}  // namespace dpdb::engine

#endif
