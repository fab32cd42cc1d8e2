// The breakpoint engine: a filter in front of bdb.Bdb.trace_dispatch. It receives the events that
// sys.settrace would deliver, decides in C++ whether bdb could act on one, and only then calls the
// debugger, with the same arguments and the same f_trace bookkeeping as CPython's trampoline.
#pragma once

#include <Python.h>
#include <frameobject.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#if PY_VERSION_HEX >= 0x030C0000
#define DPDB_GET_EXTRA PyUnstable_Code_GetExtra
#define DPDB_SET_EXTRA PyUnstable_Code_SetExtra
#define DPDB_EXTRA_INDEX PyUnstable_Eval_RequestCodeExtraIndex
#else
#define DPDB_GET_EXTRA _PyCode_GetExtra
#define DPDB_SET_EXTRA _PyCode_SetExtra
#define DPDB_EXTRA_INDEX _PyEval_RequestCodeExtraIndex
#endif

namespace dpdb::engine {

struct Patch;
struct FastCopy;
struct ConditionCache;

enum class Event { kCall, kLine, kReturn, kException, kOpcode };

// Mirror of one debugger's stepping state (bdb's stopframe/returnframe/stoplineno/...), pushed by
// the Python mixin whenever bdb changes it, so that events can be answered without Python.
struct Session {
    PyObject* debugger = nullptr;     // strong
    PyObject* dispatch = nullptr;     // strong: debugger.trace_dispatch
    PyObject* stopframe = nullptr;    // strong or null (null = step into anything)
    PyObject* returnframe = nullptr;  // strong or null
    PyObject* stopcode = nullptr;     // strong: stopframe's code
    PyObject* returncode = nullptr;   // strong: returnframe's code
    long stoplineno = 0;
    bool botframe_none = true;
    bool quitting = false;
    bool opcodes = false;
    bool stop_in_generator = false;
    // Frames whose f_trace_opcodes bdb set (3.13 set_trace steps by instruction).
    std::vector<PyObject*> opcode_codes;  // strong

    bool stepping() const { return !quitting && stopframe == nullptr; }
    bool continuing() const {
        return quitting || (stopframe != nullptr && stoplineno == -1 && returnframe == nullptr &&
                            !stop_in_generator && !botframe_none && !opcodes);
    }
};

// What the engine knows about one code object, valid for one breakpoint generation.
struct CodeInfo {
    std::uint64_t generation = 0;
    bool in_bp_file = false;
    // A breakpoint on co_firstlineno (pdb's "break function") makes bdb test every line, until
    // it has learned the function's first executable line: then that line joins `lines`.
    bool all_lines = false;
    const std::vector<int>* lines = nullptr;
    std::vector<int> function_lines;
#if PY_VERSION_HEX < 0x030C0000
    // Per generation, filled by the 3.9-3.11 backend for code of breakpoint files: whether a
    // frame running this code must be line-traced, and the copy of it with the breakpoint checks
    // compiled in (borrowed: the backend keeps this generation's copies alive) with its CodeInfo.
    bool prepared = false;
    bool needs_trace = false;
    PyObject* patched = nullptr;
    CodeInfo* patched_info = nullptr;
    // Set on such a copy only, for its whole life.
    std::unique_ptr<Patch> patch;
#else
    // 3.12+ (monitoring.cpp): the code's _co_instrumentation_version when all its
    // superinstruction pairs were last put back; until CPython instruments it again, putting
    // back the pairs around a line whose event was taken out suffices.
    std::uint64_t restored_at_version = UINT64_MAX;
    // Per generation, worked out at the code's first PY_START (monitoring.cpp), as every later
    // one asks again while the code keeps its PY_START: -1 until then. Whether a breakpoint line
    // lies within the code's lines, and whether its start carries one's line event.
    signed char has_break_line = -1;
    signed char start_carries_break = -1;
    // Set on a fast copy (fast_copy.hpp) only, for its whole life.
    std::unique_ptr<FastCopy> fast;
#endif

    // Where the frames of this code keep the variables each breakpoint condition names
    // (condition.hpp); kept for the code's life.
    std::unique_ptr<ConditionCache> conditions;

    bool is_bp_line(int line) const;
};

struct State {
    bool initialised = false;
    Py_ssize_t extra_index = -1;
    std::uint64_t generation = 1;
    std::uint64_t session_epoch = 1;
    // canonic filename -> sorted breakpoint lines, from bdb.Breakpoint.bplist.
    std::unordered_map<std::string, std::vector<int>> breaks;
    std::unordered_map<unsigned long, Session*> by_thread;
    std::unordered_map<PyObject*, Session*> by_debugger;
    Session* fallback = nullptr;           // serves threads that have no session of their own
    PyObject* canonic = nullptr;           // callable: raw co_filename -> canonic filename
    PyObject* canonic_cache = nullptr;     // dict
    PyObject* breakpoint_class = nullptr;  // bdb.Breakpoint
    PyObject* event_names[5] = {};
    // Derived from the sessions after every change.
    bool armed = false;
    bool any_stepping = false;
    bool any_nontrivial = false;
    bool any_generator_stop = false;
    bool any_opcodes = false;
    // Some session needs every call event: it steps, or bdb has not seen its first call yet.
    bool any_calls = false;
    // Code objects whose frames a session steps through (stopframe/returnframe code), borrowed
    // from the sessions.
    std::vector<PyObject*> step_codes;
    std::uint64_t forwarded = 0;
    std::uint64_t patched = 0;  // code objects given compiled-in breakpoint checks
    std::uint64_t trapped = 0;  // line events delivered from such a check
    // 3.11 swap mode (tracer.cpp): whether it is on, functions given a patched __code__, heap
    // scans made.
    bool swap = false;
    std::uint64_t swapped = 0;
    std::uint64_t swap_scans = 0;
    std::string swap_blocker;  // why the last scan left swap mode off
    // 3.12 scan mode (monitoring.cpp): whether it is on, heap scans made, code objects given
    // line events by it, and why it is off while breakpoints are armed.
    bool scan = false;
    std::uint64_t scans = 0;
    std::uint64_t scan_codes = 0;
    std::string scan_blocker;
    // 3.12 (monitoring.cpp): superinstructions put back after sys.monitoring took them out.
    std::uint64_t superinstructions = 0;
    // Breakpoint line events the engine kept from bdb because every condition there was false
    // (condition.cpp).
    std::uint64_t conditions_false = 0;
    // Of those, the ones answered in C with no Python run and the hits counted in C
    // (condition_fast.hpp).
    std::uint64_t conditions_in_c = 0;
    // Of those, the ones a patched tail's guard answered without calling its check (3.9-3.11,
    // condition_guard.hpp).
    std::uint64_t conditions_guarded = 0;
    // Logpoint messages the engine dropped itself, no token being left (condition.cpp).
    std::uint64_t logpoints_dropped = 0;
};

// One per process, touched only with the GIL held. A plain global rather than a function-local
// static: the frame evaluator reads it at every call, where a guard check costs.
extern State g_state;
inline State& state() {
    return g_state;
}

int engine_init(PyObject* canonic);

int engine_refresh();
int engine_attach(PyObject* debugger);
int engine_update(PyObject* debugger);
int engine_detach(PyObject* debugger);
bool is_step_code(PyObject* code);
inline bool is_generator_code(PyObject* code) {
    const int flags = CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR;
    return (reinterpret_cast<PyCodeObject*>(code)->co_flags & flags) != 0;
}

// Session of the calling thread, or null.
Session* current_session();
CodeInfo* code_info(PyObject* code);
// This generation's CodeInfo of `code` if it is already known, else null (never an exception):
// the evaluator's common case, without code_info's work on a miss.
#if PY_VERSION_HEX < 0x030C0000
// CPython's _PyCodeObjectExtra (internal/pycore_code.h, the same from 3.6 to 3.11), read in
// place of _PyCode_GetExtra's call, which the 3.9-3.11 evaluator would make at every call.
struct CodeExtraMirror {
    Py_ssize_t ce_size;
    void* ce_extras[1];
};
inline void* code_extra(PyObject* code, Py_ssize_t index) {
    const auto* extra =
        static_cast<const CodeExtraMirror*>(reinterpret_cast<PyCodeObject*>(code)->co_extra);
    return extra && index >= 0 && index < extra->ce_size ? extra->ce_extras[index] : nullptr;
}
#else
inline void* code_extra(PyObject* code, Py_ssize_t index) {
    void* extra = nullptr;
    if (DPDB_GET_EXTRA(code, index, &extra) < 0) PyErr_Clear();
    return extra;
}
#endif
inline CodeInfo* known_code_info(PyObject* code) {
    auto* info = static_cast<CodeInfo*>(code_extra(code, g_state.extra_index));
    return info && info->generation == g_state.generation ? info : nullptr;
}
// bdb's canonic form of a raw co_filename (borrowed from a cache), or null with an exception set.
PyObject* canonic_filename(PyObject* filename);
// Whether a raw co_filename (a str) names a file holding breakpoints: 1, 0, or -1 with an
// exception set.
int is_bp_filename(PyObject* filename);
// The breakpoint lines of the file a raw co_filename names (*lines stays null when it holds none).
// Returns -1 with an exception set. `*canonic_name` (borrowed from the cache), if asked for, is
// set with `*lines`.
int breaks_of_file(PyObject* filename, const std::vector<int>** lines,
                   PyObject** canonic_name = nullptr);
// gc.get_objects(): a new reference to a list. It leaves out what gc.freeze() moved to the
// permanent generation, so a heap scan first asks frozen_objects().
PyObject* heap_objects();
// gc.get_freeze_count(), or -1 with an exception set.
long frozen_objects();

// The per-event decision; `line` is the line for kLine/kOpcode. Returns -1 with an exception set.
int handle(PyFrameObject* frame, PyObject* code, Event event, PyObject* arg, int line);

// Backends: exactly one is compiled for a given interpreter.
const char* backend_name();
int backend_init();
// Called after any change of breakpoints or stepping state.
int backend_reconfigure();
// What the strategy (DPDB_ENGINE) lets the backend use; each mechanism has a slower one to fall
// back on, and a backend ignores what its interpreter does not have.
struct Mechanisms {
    // 3.9-3.11: the PEP 523 gate in front of the C tracer, and behind it the breakpoint checks
    // compiled into the bytecode.
    bool gate = true;
    bool patch = true;
    // 3.11: swap mode (functions given patched code, no evaluator; tracer.cpp).
    bool swap = true;
    // 3.12: scan mode (code of breakpoint files found without a global PY_START; monitoring.cpp).
    bool scan = true;
    // 3.12: superinstructions put back into code objects whose events were taken out.
    bool superinstructions = true;
    // Breakpoint conditions evaluated by the engine (condition.hpp), not by bdb.
    bool conditions = true;
    // 3.9-3.11: each compiled-in check asks its line's guard first (condition_guard.hpp).
    bool guard = true;
};
void backend_allow(const Mechanisms& allowed);
// The builtin that patched code calls (3.9-3.11), created on first use; null elsewhere.
PyObject* backend_checker();
// The user's code behind `code` (borrowed): `code` itself, except for a copy 3.11's swap mode
// gave the user's functions (or a patched copy the gate runs), which leads back to the original.
PyObject* backend_user_code(PyObject* code);

}  // namespace dpdb::engine
