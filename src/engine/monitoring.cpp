// CPython 3.12+: the engine as a sys.monitoring tool with C callbacks. Events stay switched off
// while nothing is armed; with breakpoints set, the code objects of files holding breakpoints are
// found (3.13: by PY_START/PY_RESUME, every other code location answering DISABLE once; 3.12: by
// scan mode, below), LINE runs only on those code objects and is DISABLEd again on every line
// without a breakpoint.
#include <Python.h>

#if PY_VERSION_HEX >= 0x030C0000

#include <dlfcn.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "engine/condition.hpp"
#include "engine/engine.hpp"
#include "engine/frame_access.hpp"
#include "engine/superinstructions.hpp"

namespace dpdb::engine {
namespace {

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
    // Scan mode (below). The strategy allows it; its code watcher and audit hook are in place.
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

Monitoring& mon() {
    static Monitoring m;
    return m;
}

PyObject* none() {
    Py_RETURN_NONE;
}
// ---- superinstructions (3.12) ----
//
// Every code object whose events change loses its superinstructions (superinstructions.hpp), so
// the code of a breakpoint file, and on 3.12 under a global PY_START every code object, would run
// a few per cent slower for good after it answered DISABLE. CPython takes an event out after the
// callback returned, so the superinstructions go back later, from a pending call: the next time
// any thread of the interpreter checks for one (at a call or a backward jump).

#if PY_VERSION_HEX < 0x030D0000
constexpr bool kRestoreSuperinstructions = true;
#else
constexpr bool kRestoreSuperinstructions = false;
#endif

// Schedules `func` to run soon with the GIL. CPython 3.12 exports _PyEval_AddPendingCall
// (PyAPI_FUNC in internal/pycore_ceval.h): unlike Py_AddPendingCall, which only the main thread
// serves, its calls can be served by any thread, so the code of worker threads gets its
// superinstructions back while the main thread waits in a join. Looked up when the engine
// starts, so that an interpreter without it still loads the engine and uses Py_AddPendingCall.
using AddPendingCall = int (*)(PyInterpreterState*, int (*)(void*), void*, int);
AddPendingCall any_thread_pending_call = nullptr;

int add_pending_call(int (*func)(void*)) {
    if (any_thread_pending_call)
        return any_thread_pending_call(PyInterpreterState_Get(), func, nullptr, 0);
    return Py_AddPendingCall(func, nullptr);
}

// A code object is walked whole once after each time CPython instrumented it (which takes every
// pair apart); after that, a line event taken out frees only the pairs around that line: a long
// function answering DISABLE line after line is not walked once per line.
int restore(PyObject* code, const std::vector<int>& line_starts) {
    CodeInfo* info = known_code_info(code);  // no Python code runs in a pending call
    const std::uint64_t version =
        reinterpret_cast<PyCodeObject*>(code)->_co_instrumentation_version;
    if (info && info->restored_at_version == version)
        return restore_superinstructions_at(code, line_starts);
    int restored = restore_superinstructions(code);
    if (info && restored >= 0) info->restored_at_version = version;
    return restored;
}

// Runs as a pending call: with the GIL, between two instructions of some thread, and must not
// raise into the code that thread runs.
int restore_pending(void*) {
    Monitoring& m = mon();
    m.restore_scheduled = false;
    std::unordered_map<PyObject*, std::vector<int>> codes;
    codes.swap(m.to_restore);
    PyObject* pending = PyErr_GetRaisedException();
    for (auto& [code, line_starts] : codes) {
        int restored = restore(code, line_starts);
        if (restored < 0)
            PyErr_WriteUnraisable(code);
        else
            state().superinstructions += static_cast<std::uint64_t>(restored);
        Py_DECREF(code);
    }
    PyErr_SetRaisedException(pending);
    return 0;
}

// `line_start` is the code unit of the line whose event is being taken out, or -1.
void restore_later(PyObject* code, int line_start = -1) {
    Monitoring& m = mon();
    if (!kRestoreSuperinstructions || !m.restore_allowed) return;
    auto [it, added] = m.to_restore.try_emplace(code);
    if (added) Py_INCREF(code);
    if (line_start >= 0) it->second.push_back(line_start);
    if (m.restore_scheduled) return;
    m.restore_scheduled = add_pending_call(restore_pending) == 0;
}

void keep_for_restore_after_stepping(PyObject* code) {
    Monitoring& m = mon();
    if (!kRestoreSuperinstructions || !m.restore_allowed) return;
    if (m.ran_under_global_events.insert(code).second) Py_INCREF(code);
}

// DISABLE for the event `code` is answering.
PyObject* disable(PyObject* code) {
    restore_later(code);
    return Py_NewRef(mon().disable);
}

// DISABLE for a line event: CPython points the frame at the line's first instruction before it
// calls the tools. PyFrame_GetLasti counts bytes, two to a code unit.
PyObject* disable_line(PyObject* code) {
    PyFrameObject* frame = PyEval_GetFrame();
    const int lasti = frame ? PyFrame_GetLasti(frame) : -1;
    restore_later(code, lasti >= 0 ? lasti / 2 : -1);
    return Py_NewRef(mon().disable);
}

int call_monitoring(PyObject* fn, PyObject* code, int events) {
    PyObject* result = code ? PyObject_CallFunction(fn, "iOi", mon().tool, code, events)
                            : PyObject_CallFunction(fn, "ii", mon().tool, events);
    if (!result) return -1;
    Py_DECREF(result);
    return 0;
}

int add_local(PyObject* code, int events) {
    Monitoring& m = mon();
    auto it = m.local.find(code);
    int before = it == m.local.end() ? 0 : it->second;
    if ((before | events) == before) return 0;
    if (call_monitoring(m.set_local_events, code, before | events) < 0) return -1;
    if (it == m.local.end()) {
        Py_INCREF(code);
        m.local[code] = events;
    } else {
        it->second |= events;
    }
    return 0;
}

// After a step: brings the instrumentation of the code that ran meanwhile up to date now (a
// change of its local events makes CPython re-instrument it at once; changed back, it ends with
// the events it had), so that its superinstructions can go back. Returns -1 with an exception.
int restore_after_stepping() {
    Monitoring& m = mon();
    std::unordered_set<PyObject*> codes;
    codes.swap(m.ran_under_global_events);
    int rc = 0;
    for (PyObject* code : codes) {
        auto it = m.local.find(code);
        const int events = it == m.local.end() ? 0 : it->second;
        if (rc == 0 && (call_monitoring(m.set_local_events, code, events ^ bit(kPyReturn)) < 0 ||
                        call_monitoring(m.set_local_events, code, events) < 0))
            rc = -1;
        if (rc == 0) restore_later(code);
        Py_DECREF(code);
    }
    return rc;
}

// The containers of code objects below are taken out before they are walked: a call into the
// interpreter may run a collection, a finalizer, and so another thread, whose new code (the code
// watcher) or first call (PY_START) adds to them.
int clear_locals() {
    Monitoring& m = mon();
    std::map<PyObject*, int> local;
    local.swap(m.local);
    int rc = 0;
    for (auto& [code, events] : local) {
        if (rc == 0 && call_monitoring(m.set_local_events, code, 0) < 0) rc = -1;
        restore_later(code);
        Py_DECREF(code);
    }
    return rc;
}

// A code object that holds a breakpoint needs its line events from now on.
int discover(PyObject* code) {
    CodeInfo* info = code_info(code);
    if (!info) return -1;
    return info->in_bp_file ? add_local(code, kBreakLocal) : 0;
}

// Calls `visit` (returning -1 with an exception set to stop) with the code of every frame on
// every thread's stack.
template <typename Visit>
int for_each_running_code(Visit visit) {
    PyObject* frames = PyObject_CallNoArgs(mon().current_frames);
    if (!frames) return -1;
    Py_ssize_t pos = 0;
    PyObject *tid, *top;
    int rc = 0;
    while (rc == 0 && PyDict_Next(frames, &pos, &tid, &top)) {
        PyFrameObject* f = reinterpret_cast<PyFrameObject*>(Py_NewRef(top));
        while (f && rc == 0) {
            PyObject* code = reinterpret_cast<PyObject*>(PyFrame_GetCode(f));
            rc = visit(code);
            Py_DECREF(code);
            PyFrameObject* back = PyFrame_GetBack(f);
            Py_DECREF(f);
            f = back;
        }
        Py_XDECREF(f);
    }
    Py_DECREF(frames);
    return rc;
}

// Breakpoints set while frames of their code are already running: PY_START has passed for them,
// so give their code line events right away, in every thread.
int discover_running() {
    return for_each_running_code(discover);
}

// ---- scan mode (3.12) ----
//
// On 3.12 a global PY_START leaves every code object it instrumented about 7% slower on
// call-heavy code, even after that code answered DISABLE and the event was switched off
// (bench/monitoring_floor.py; 3.13 has no such cost). So on 3.12 the code objects of breakpoint
// files are found without it, and only they get (local) events:
// - a heap scan whenever the set of breakpoint files changes: functions, generators,
//   coroutines, async generators, the frames of every thread, and the code nested in the
//   co_consts of each;
// - a code watcher for code made later: an import (from source or a .pyc), compile, exec of
//   source, code.replace, unpickling;
// - an audit hook for code made earlier and run later: "exec" (exec and eval) of a code object.
// What none of them sees misses its breakpoints: a function made by hand from a code object held
// since before the scan (types.FunctionType(code, ...)). Objects moved out of the collector's
// view by gc.freeze() keep scan mode off (global PY_START instead), as DPDB_ENGINE=noscan does.

#if PY_VERSION_HEX < 0x030D0000
constexpr bool kScanMode = true;
#else
constexpr bool kScanMode = false;
#endif

std::vector<std::string> breakpoint_files() {
    std::vector<std::string> files;
    for (const auto& [file, lines] : state().breaks) files.push_back(file);
    std::sort(files.begin(), files.end());
    return files;
}

void drop_scan_codes() {
    Monitoring& m = mon();
    std::unordered_set<PyObject*> codes;
    codes.swap(m.scan_codes);
    m.scan_files.clear();
    state().scan_codes = 0;
    for (PyObject* code : codes) Py_DECREF(code);
}

// Gives every kept code object its line events (strong references held meanwhile).
int apply_scan_codes() {
    std::vector<PyObject*> codes(mon().scan_codes.begin(), mon().scan_codes.end());
    for (PyObject* code : codes) Py_INCREF(code);
    int rc = 0;
    for (PyObject* code : codes) {
        if (rc == 0) rc = add_local(code, kBreakLocal);
        Py_DECREF(code);
    }
    return rc;
}

// A code object of a breakpoint file: kept, and given its line events at once while scan mode
// is in force (a fresh code object has no frame yet; an old one is instrumented in place).
int keep_scan_code(PyObject* code) {
    Monitoring& m = mon();
    if (!m.scan_codes.insert(code).second) return 0;
    Py_INCREF(code);
    state().scan_codes = m.scan_codes.size();
    return m.scan ? add_local(code, kBreakLocal) : 0;
}

// Keeps the code objects of breakpoint files in the trees it visits (a code object and those
// nested in its co_consts), each code object once.
class ScanCollector {
  public:
    // Returns -1 with an exception set.
    int visit(PyObject* code) {
        if (!seen_.insert(code).second) return 0;
        auto* co = reinterpret_cast<PyCodeObject*>(code);
        // Code objects come in files: one verdict per co_filename object saves a dict lookup
        // for each (the objects stay alive: the code objects holding them do).
        auto verdict = verdicts_.find(co->co_filename);
        int hit;
        if (verdict != verdicts_.end()) {
            hit = verdict->second;
        } else {
            hit = is_bp_filename(co->co_filename);
            if (hit < 0) return -1;
            verdicts_.emplace(co->co_filename, hit != 0);
        }
        if (hit && keep_scan_code(code) < 0) return -1;
        PyObject* consts = co->co_consts;
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(consts); ++i) {
            PyObject* child = PyTuple_GET_ITEM(consts, i);
            if (PyCode_Check(child) && visit(child) < 0) return -1;
        }
        return 0;
    }

    // The code a function, generator, coroutine or async generator runs, if `o` is one.
    int visit_object(PyObject* o) {
        if (PyFunction_Check(o)) return visit(PyFunction_GET_CODE(o));
        const char* attr = PyGen_Check(o)             ? "gi_code"
                           : PyCoro_CheckExact(o)     ? "cr_code"
                           : PyAsyncGen_CheckExact(o) ? "ag_code"
                                                      : nullptr;
        if (!attr) return 0;
        PyObject* code = PyObject_GetAttrString(o, attr);
        if (!code) return -1;
        int rc = PyCode_Check(code) ? visit(code) : 0;
        Py_DECREF(code);
        return rc;
    }

  private:
    std::unordered_set<PyObject*> seen_;
    std::unordered_map<PyObject*, bool> verdicts_;
};

// gc.freeze() hides what it froze from gc.get_objects(), and so from the heap scan. 3.12 itself
// keeps objects frozen from the start, but no code among them (the MRO tuples of static types);
// a program's gc.freeze() freezes everything alive then, importlib's own functions included.
// Those functions (new references), to be looked for in the heap.
std::vector<PyObject*> freeze_witnesses() {
    std::vector<PyObject*> witnesses;
    PyObject* modules = PyImport_GetModuleDict();
    PyObject* importlib = PyDict_GetItemString(modules, "_frozen_importlib");
    if (!importlib || !PyModule_Check(importlib)) return witnesses;
    PyObject* dict = PyModule_GetDict(importlib);
    Py_ssize_t pos = 0;
    PyObject *name, *value;
    while (PyDict_Next(dict, &pos, &name, &value))
        if (PyFunction_Check(value)) witnesses.push_back(Py_NewRef(value));
    return witnesses;
}

// Every code object of a breakpoint file that a frame runs, or that a function, generator or
// coroutine on the heap can run. The hooks are live meanwhile (scan_files is set): code made
// while the scan runs Python code (canonic file names) is kept too. `*hidden` tells that a
// gc.freeze() of the program hid part of the heap. Returns -1 with an exception set.
int scan_heap(bool* hidden) {
    ++state().scans;
    *hidden = false;
    long frozen = frozen_objects();
    if (frozen < 0) return -1;
    std::vector<PyObject*> witnesses;
    if (frozen > 0) {
        witnesses = freeze_witnesses();
        if (witnesses.empty()) {
            *hidden = true;
            return 0;
        }
    }
    ScanCollector collector;
    int rc = for_each_running_code([&](PyObject* code) { return collector.visit(code); });
    PyObject* objects = rc == 0 ? heap_objects() : nullptr;
    if (!objects) rc = -1;
    const Py_ssize_t n = objects ? PyList_GET_SIZE(objects) : 0;
    std::unordered_set<PyObject*> unseen(witnesses.begin(), witnesses.end());
    for (Py_ssize_t i = 0; i < n && rc == 0; ++i) {
        PyObject* o = PyList_GET_ITEM(objects, i);
        if (!unseen.empty() && PyFunction_Check(o)) unseen.erase(o);
        rc = collector.visit_object(o);
    }
    Py_XDECREF(objects);
    *hidden = !unseen.empty();
    for (PyObject* witness : witnesses) Py_DECREF(witness);
    return rc;
}

// The hooks run inside whatever made or runs the code: they keep the exception that may be
// pending there, and report their own failure as unraisable rather than fail that operation.
template <typename Work>
void in_hook(PyObject* context, Work work) {
    PyObject* pending = PyErr_GetRaisedException();
    if (work() < 0) PyErr_WriteUnraisable(context);
    PyErr_SetRaisedException(pending);
}

// The engine's interpreter: an audit hook is called from every one.
bool in_engine_interpreter() {
    return PyInterpreterState_Get() == mon().interpreter;
}

int on_code_event(PyCodeEvent event, PyCodeObject* co) {
    if (event != PY_CODE_EVENT_CREATE || mon().scan_files.empty()) return 0;
    auto* code = reinterpret_cast<PyObject*>(co);
    in_hook(code, [&] {
        int hit = is_bp_filename(co->co_filename);
        return hit > 0 ? keep_scan_code(code) : hit;
    });
    return 0;
}

int on_audit(const char* event, PyObject* args, void*) {
    if (mon().scan_files.empty() || std::strcmp(event, "exec") != 0 || !in_engine_interpreter())
        return 0;
    PyObject* code = PyTuple_GET_SIZE(args) > 0 ? PyTuple_GET_ITEM(args, 0) : nullptr;
    if (!code || !PyCode_Check(code)) return 0;
    in_hook(code, [&] { return ScanCollector().visit(code); });
    return 0;
}

// Decides whether scan mode finds the code of breakpoint files from now on, and scans the heap
// when the set of breakpoint files changed. Returns -1 with an exception set.
int reconfigure_scan() {
    State& st = state();
    Monitoring& m = mon();
    st.scan = false;
    std::vector<std::string> files = breakpoint_files();
    if (!kScanMode || !m.scan_allowed || files.empty()) {
        st.scan_blocker.clear();
        drop_scan_codes();
        m.frozen_files.clear();
        return 0;
    }
    if (!m.scan_hooks) {
        st.scan_blocker = "no code watcher or audit hook";
        return 0;
    }
    if (files == m.frozen_files) return 0;  // the blocker stays
    if (files != m.scan_files) {
        drop_scan_codes();
        m.scan_files = files;
        bool hidden = false;
        int rc = scan_heap(&hidden);
        if (rc < 0 || hidden) {
            drop_scan_codes();
            if (hidden) {
                st.scan_blocker = "gc.freeze()";
                m.frozen_files = std::move(files);
            }
            return rc;
        }
    }
    m.frozen_files.clear();
    st.scan_blocker.clear();
    st.scan = st.armed;
    return 0;
}

PyFrameObject* current_frame() {
    PyFrameObject* frame = PyEval_GetFrame();
    if (!frame) PyErr_SetString(PyExc_SystemError, "dpdb engine: event without a frame");
    return frame;
}

PyObject* finish(int rc) {
    return rc < 0 ? nullptr : none();
}

PyObject* deliver(PyObject* code, Event event, PyObject* arg) {
    PyFrameObject* frame = current_frame();
    if (!frame) return nullptr;
    return finish(handle(frame, code, event, arg, 0));
}

PyObject* deliver_line(PyObject* code, int line, Event event) {
    PyFrameObject* frame = current_frame();
    if (!frame) return nullptr;
    Py_INCREF(frame);
    // As CPython's own line tracer does: f_lineno is authoritative while the debugger runs,
    // and a jump (pdb's "j") rewrites it.
    frame_lineno(frame) = line;
    int rc = handle(frame, code, event, Py_None, line);
    frame_lineno(frame) = 0;
    Py_DECREF(frame);
    return finish(rc);
}

PyObject* on_start(PyObject*, PyObject* const* args, Py_ssize_t) {
    State& st = state();
    PyObject* code = args[0];
    if (!st.armed) return disable(code);
    if (!st.breaks.empty() && discover(code) < 0) return nullptr;
    if (!st.any_calls) return disable(code);
    keep_for_restore_after_stepping(code);
    return deliver(code, Event::kCall, Py_None);
}

PyObject* on_resume(PyObject*, PyObject* const* args, Py_ssize_t) {
    State& st = state();
    PyObject* code = args[0];
    if (!st.armed) return disable(code);
    if (!st.breaks.empty() && discover(code) < 0) return nullptr;
    if (!st.any_calls && !is_step_code(code)) return disable(code);
    keep_for_restore_after_stepping(code);
    return deliver(code, Event::kCall, Py_None);
}

PyObject* on_throw(PyObject*, PyObject* const* args, Py_ssize_t) {
    State& st = state();
    if (!st.armed || (!st.any_calls && !is_step_code(args[0]))) return none();
    return deliver(args[0], Event::kCall, Py_None);
}

bool steps_through(PyObject* code) {
    State& st = state();
    return st.armed && (st.any_stepping || is_step_code(code));
}

PyObject* on_return(PyObject*, PyObject* const* args, Py_ssize_t) {
    if (!steps_through(args[0])) return disable(args[0]);
    return deliver(args[0], Event::kReturn, args[2]);
}

PyObject* on_unwind(PyObject*, PyObject* const* args, Py_ssize_t) {
    if (!steps_through(args[0])) return none();
    return deliver(args[0], Event::kReturn, Py_None);
}

PyObject* exception_event(PyObject* code, PyObject* exc) {
    PyObject* tb = PyException_GetTraceback(exc);
    PyObject* tuple =
        PyTuple_Pack(3, reinterpret_cast<PyObject*>(Py_TYPE(exc)), exc, tb ? tb : Py_None);
    Py_XDECREF(tb);
    if (!tuple) return nullptr;
    PyObject* result = deliver(code, Event::kException, tuple);
    Py_DECREF(tuple);
    return result;
}

bool wants_exceptions(PyObject* code) {
    return steps_through(code) || (state().armed && state().any_generator_stop);
}

PyObject* on_raise(PyObject*, PyObject* const* args, Py_ssize_t) {
    if (!wants_exceptions(args[0])) return none();
    return exception_event(args[0], args[2]);
}

PyObject* on_stop_iteration(PyObject*, PyObject* const* args, Py_ssize_t) {
    if (!wants_exceptions(args[0])) return disable(args[0]);
    return exception_event(args[0], args[2]);
}

PyObject* on_line(PyObject*, PyObject* const* args, Py_ssize_t) {
    State& st = state();
    PyObject* code = args[0];
    if (!st.armed) return disable(code);
    int line = PyLong_AsLong(args[1]);
    CodeInfo* info = code_info(code);
    if (!info) return nullptr;
    if (!info->is_bp_line(line) && !st.any_stepping && !is_step_code(code))
        return disable_line(code);
    // Nobody steps, so bdb would look only for a breakpoint: false conditions need no frame.
    if (!st.any_nontrivial && conditions_false_running(code, line)) return none();
    bool learning = info->all_lines;
    PyObject* result = deliver_line(code, line, Event::kLine);
    // bdb may have learned a function's first executable line from this event: the next event
    // works out anew which lines can stop (the info lives as long as the code).
    if (learning) info->generation = 0;
    return result;
}

// sys.settrace reports a backward jump to the start of the same line as a new "line" event
// (one-line loops); CPython's legacy tracer does it from JUMP, and so must we.
PyObject* on_jump(PyObject*, PyObject* const* args, Py_ssize_t) {
    State& st = state();
    PyObject* code = args[0];
    if (!st.armed) return disable(code);
    int from = PyLong_AsLong(args[1]);
    int to = PyLong_AsLong(args[2]);
    if (to > from) return disable(code);
    auto* co = reinterpret_cast<PyCodeObject*>(code);
    int to_line = PyCode_Addr2Line(co, to);
    if (to_line < 0 || to_line != PyCode_Addr2Line(co, from)) return disable(code);
    CodeInfo* info = code_info(code);
    if (!info) return nullptr;
    if (!info->is_bp_line(to_line) && !st.any_stepping && !is_step_code(code)) return disable(code);
    return deliver_line(code, to_line, Event::kLine);
}

PyObject* on_instruction(PyObject*, PyObject* const* args, Py_ssize_t) {
    State& st = state();
    if (!st.armed || !st.any_opcodes) return none();
    PyFrameObject* frame = current_frame();
    if (!frame) return nullptr;
    if (!frame_trace_opcodes(frame) || !frame_trace(frame)) return none();
    return finish(handle(frame, args[0], Event::kOpcode, Py_None, PyFrame_GetLineNumber(frame)));
}

struct Callback {
    int event;
    const char* name;
    PyObject* (*fn)(PyObject*, PyObject* const*, Py_ssize_t);
};

const Callback kCallbacks[] = {
    {kPyStart, "py_start", on_start},
    {kPyResume, "py_resume", on_resume},
    {kPyThrow, "py_throw", on_throw},
    {kPyReturn, "py_return", on_return},
    {kPyYield, "py_yield", on_return},
    {kPyUnwind, "py_unwind", on_unwind},
    {kRaise, "raise", on_raise},
    {kStopIteration, "stop_iteration", on_stop_iteration},
    {kLineEv, "line", on_line},
    {kJump, "jump", on_jump},
    {kInstruction, "instruction", on_instruction},
};

PyMethodDef method_defs[sizeof(kCallbacks) / sizeof(kCallbacks[0])];

}  // namespace

const char* backend_name() {
    return "monitoring";
}

int backend_init() {
    Monitoring& m = mon();
    PyObject* sys = PyImport_ImportModule("sys");
    if (!sys) return -1;
    PyObject* monitoring = PyObject_GetAttrString(sys, "monitoring");
    m.current_frames = PyObject_GetAttrString(sys, "_current_frames");
    Py_DECREF(sys);
    if (!monitoring || !m.current_frames) return -1;
    m.disable = PyObject_GetAttrString(monitoring, "DISABLE");
    m.set_events = PyObject_GetAttrString(monitoring, "set_events");
    m.set_local_events = PyObject_GetAttrString(monitoring, "set_local_events");
    m.restart_events = PyObject_GetAttrString(monitoring, "restart_events");
    PyObject* use_tool_id = PyObject_GetAttrString(monitoring, "use_tool_id");
    PyObject* register_callback = PyObject_GetAttrString(monitoring, "register_callback");
    Py_DECREF(monitoring);
    if (!m.disable || !m.set_events || !m.set_local_events || !m.restart_events || !use_tool_id ||
        !register_callback) {
        Py_XDECREF(use_tool_id);
        Py_XDECREF(register_callback);
        return -1;
    }
    // DEBUGGER_ID first; another debugger may hold it, and any free id works the same.
    for (int tool : {0, 3, 4, 1, 2, 5}) {
        PyObject* r = PyObject_CallFunction(use_tool_id, "is", tool, "dpdb");
        if (r) {
            Py_DECREF(r);
            m.tool = tool;
            break;
        }
        PyErr_Clear();
    }
    Py_DECREF(use_tool_id);
    if (m.tool < 0) {
        Py_DECREF(register_callback);
        PyErr_SetString(PyExc_RuntimeError, "dpdb engine: every sys.monitoring tool id is taken");
        return -1;
    }
    int i = 0;
    for (const Callback& cb : kCallbacks) {
        method_defs[i] = {cb.name, reinterpret_cast<PyCFunction>(reinterpret_cast<void*>(cb.fn)),
                          METH_FASTCALL, nullptr};
        PyObject* fn = PyCFunction_New(&method_defs[i], nullptr);
        ++i;
        if (!fn) {
            Py_DECREF(register_callback);
            return -1;
        }
        PyObject* r = PyObject_CallFunction(register_callback, "iiO", m.tool, bit(cb.event), fn);
        Py_DECREF(fn);
        if (!r) {
            Py_DECREF(register_callback);
            return -1;
        }
        Py_DECREF(r);
    }
    Py_DECREF(register_callback);
    if (kRestoreSuperinstructions) {
        if (superinstructions_init() < 0) return -1;
        any_thread_pending_call =
            reinterpret_cast<AddPendingCall>(::dlsym(RTLD_DEFAULT, "_PyEval_AddPendingCall"));
    }
    if (kScanMode) {
        // Once per process (an audit hook cannot be removed): both return at once while no
        // breakpoint file is armed in scan mode. Without them the engine uses PY_START.
        m.interpreter = PyInterpreterState_Get();
        if (PyCode_AddWatcher(on_code_event) >= 0 && PySys_AddAuditHook(on_audit, nullptr) == 0)
            m.scan_hooks = true;
        else
            PyErr_Clear();
    }
    return 0;
}

int backend_reconfigure() {
    State& st = state();
    Monitoring& m = mon();
    if (m.tool < 0) return 0;
    if (reconfigure_scan() < 0) return -1;
    int global = 0;
    std::vector<PyObject*> opcode_codes;
    if (st.armed) {
        if (!st.breaks.empty() && !st.scan) global |= bit(kPyStart) | bit(kPyResume);
        if (st.any_calls) global |= bit(kPyStart) | bit(kPyResume) | bit(kPyThrow);
        if (st.any_stepping) global |= kStepLocal | bit(kPyStart) | bit(kPyThrow);
        if (st.any_nontrivial) global |= bit(kRaise) | bit(kPyUnwind) | bit(kPyThrow);
        if (st.any_generator_stop) global |= bit(kRaise) | bit(kStopIteration);
        for (auto& [dbg, s] : st.by_debugger)
            if (!s->quitting)
                opcode_codes.insert(opcode_codes.end(), s->opcode_codes.begin(),
                                    s->opcode_codes.end());
    }
    if (m.applied && m.generation == st.generation && m.global_events == global &&
        m.scan == st.scan && m.step_codes == st.step_codes && m.opcode_codes == opcode_codes)
        return 0;
    if (clear_locals() < 0) return -1;
    m.scan = st.scan;
    if (st.armed) {
        for (PyObject* code : st.step_codes)
            if (add_local(code, kStepLocal) < 0) return -1;
        for (PyObject* code : opcode_codes)
            if (add_local(code, bit(kInstruction)) < 0) return -1;
        if (st.scan) {
            if (apply_scan_codes() < 0) return -1;
        } else if (!st.breaks.empty() && discover_running() < 0) {
            return -1;
        }
    }
    if (call_monitoring(m.set_events, nullptr, global) < 0) return -1;
    PyObject* r = PyObject_CallNoArgs(m.restart_events);
    if (!r) return -1;
    Py_DECREF(r);
    if (!(st.armed && st.any_calls) && !m.ran_under_global_events.empty() &&
        restore_after_stepping() < 0)
        return -1;
    m.applied = true;
    m.generation = st.generation;
    m.global_events = global;
    m.step_codes = st.step_codes;
    m.opcode_codes = std::move(opcode_codes);
    return 0;
}

void backend_allow(const Mechanisms& allowed) {
    mon().scan_allowed = allowed.scan;
    mon().restore_allowed = allowed.superinstructions;
}

PyObject* backend_checker() {
    return nullptr;
}

}  // namespace dpdb::engine

#endif
