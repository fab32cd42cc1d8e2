// CPython 3.9-3.11: what the backend's three mechanisms share. The C tracer (tracer.cpp) delivers
// the events of sys.settrace; the PEP 523 gate (gate.cpp) keeps it off frames that run a copy of
// their code with the breakpoint checks compiled in (patch.hpp); on 3.11, swap mode (swap.cpp)
// gives functions those copies themselves and installs no evaluator while that is safe.
#pragma once

#include <Python.h>

#if PY_VERSION_HEX < 0x030C0000

#include <cstdint>
#include <vector>

#include "engine/engine.hpp"
#include "engine/frame_access.hpp"
#include "engine/patch.hpp"

namespace dpdb::engine {

inline PyObject* borrowed_code(PyFrameObject* frame) {
#if PY_VERSION_HEX >= 0x030B0000
    PyObject* code = reinterpret_cast<PyObject*>(PyFrame_GetCode(frame));
    Py_DECREF(code);  // the frame keeps it alive
    return code;
#else
    return reinterpret_cast<PyObject*>(frame->f_code);
#endif
}

// ---- the C tracer (tracer.cpp) ----
int tracer(PyObject*, PyFrameObject* frame, int what, PyObject* arg);
// Installs or removes the tracer on `ts`, with nested frames left alone meanwhile (below).
int set_trace(PyThreadState* ts, bool on);
// Whether some frame on `ts`'s stack runs code holding a breakpoint without its check, so that
// the thread must stay traced while the gate is on. Returns -1 with an exception set.
int needs_tracing(PyThreadState* ts, bool* result);
// _PyEval_SetTrace raises the "sys.settrace" audit event before it changes anything, and a
// Python audit hook then runs on this thread with the engine half-way through a switch: its
// frames enter the gate, which would switch the trace function again (3.9: without end, until
// the C stack overflows; 3.10/3.11: CPython's re-entry check raises in the hook). While a thread
// switches, its nested frames run as they are, untouched by the gate and the tracer. Per OS
// thread, because a hook may release the GIL and let another thread switch meanwhile.
extern thread_local bool t_switching_trace;

// ---- the gate (gate.cpp) ----
extern bool g_gate_allowed;   // the strategy may forbid PEP 523
extern bool g_patch_allowed;  // ... or the breakpoint checks in the bytecode
extern bool g_gate;           // the gate decides which frames run traced
extern std::uint64_t g_reconfigured;
extern PyObject* g_checker;  // the builtin the patched code calls
// This generation's patched copies (strong; each holds its original).
extern std::vector<PyObject*> g_live_patches;

// The line event at a check's line start that the engine has already handled for a frame (the
// tracer saw the line, or a trap delivered it): the check that follows must not repeat it.
struct SeenLine {
    PyFrameObject* frame = nullptr;  // compared only
    int unit = -1;
};
extern thread_local SeenLine g_seen;

// The lines of `code` that hold a breakpoint this generation, sorted.
int breakpoint_lines(PyObject* code, const CodeInfo* info, std::vector<int>& lines);
// A copy of `code` with checks at `lines` (see build_patched), whose CodeInfo (*info) owns its
// description; null without an exception set when it cannot be made safely.
PyObject* new_patched_copy(PyObject* code, const std::vector<int>& lines, bool grow_stack,
                           CodeInfo** info);
// Fills the per-generation fields of `info` (see CodeInfo): whether frames running `code` need
// the tracer, and for an original holding breakpoints, its patched copy when one can be made.
int prepare(PyObject* code, CodeInfo* info);
// The opcode event of a frame whose check set a trap: delivers the line event there.
int spring_trap(PyFrameObject* frame);
void install_gate(bool on);

#if PY_VERSION_HEX >= 0x030B0000
// ---- swap mode (swap.cpp) ----
extern bool g_swap;
extern bool g_rescan_pending;
extern std::uint32_t g_rescan_ticks;
// Adds swap mode's audit hook, once per process; without it there is no swap mode.
void swap_init();
void swap_allow(bool allowed);
void maybe_rescan(PyObject* pending);
// Whether a frame running `code` is fine under swap mode, from what is already known.
bool swap_frame_ok(PyObject* code);
// Swap mode can no longer vouch for every frame: the gate takes over at once.
void swap_to_gate();

// ---- the code swap mode gives functions (swap_code.cpp) ----
// Our own code.replace and __code__ writes raise audit events; per thread, as scans in two
// threads may interleave wherever one runs Python code.
extern thread_local bool g_in_swap_code;
// The user's code behind `code`: a copy swap mode made, or a patched copy the gate made for a
// frame, lead back to it.
PyObject* original_of(PyObject* code);
// The CodeInfo of `code` if it is current for this generation, without computing anything.
CodeInfo* peek_info(PyObject* code);
// What functions of the original `orig` should run this generation, as a new reference (Python
// code run meanwhile may set breakpoints, which forgets it); *found is false when that is not
// known yet and `compute` is false. Returns -1 with an exception set.
int want_of(PyObject* orig, bool compute, PyObject** want, bool* found);
// The original of a copy swap mode made, or null.
PyObject* swapped_original(PyObject* code);
// Forgets what functions should run, and the copies nothing holds any more.
void forget_copies();
// A code object made by the program from a patched copy learns the copy's description.
int adopt_derived(PyObject* code, CodeInfo* info);
// In breakpoint-only mode: whether swap mode takes the gate's place. Returns -1 with an
// exception set.
int reconfigure_swap(bool gate);
#endif

}  // namespace dpdb::engine

#endif
