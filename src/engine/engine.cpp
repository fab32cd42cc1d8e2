#include "engine/engine.hpp"

#include <algorithm>

#include "engine/condition.hpp"
#include "engine/fast_copy.hpp"
#include "engine/frame_access.hpp"
#include "engine/patch.hpp"

namespace dpdb::engine {

State g_state;

PyObject* canonic_filename(PyObject* filename) {
    State& st = state();
    PyObject* hit = PyDict_GetItemWithError(st.canonic_cache, filename);
    if (hit) return hit;
    if (PyErr_Occurred()) return nullptr;
    PyObject* canonic = PyObject_CallOneArg(st.canonic, filename);
    if (!canonic) return nullptr;
    int rc = PyDict_SetItem(st.canonic_cache, filename, canonic);
    Py_DECREF(canonic);
    return rc < 0 ? nullptr : canonic;
}

bool CodeInfo::is_bp_line(int line) const {
    if (!in_bp_file) return false;
    return all_lines || std::binary_search(lines->begin(), lines->end(), line) ||
           std::find(function_lines.begin(), function_lines.end(), line) != function_lines.end();
}

namespace {

struct ThreadCache {
    std::uint64_t epoch = 0;
    Session* session = nullptr;
};
thread_local ThreadCache tls_cache;

void free_code_info(void* p) {
    delete static_cast<CodeInfo*>(p);
}

void clear_ref(PyObject*& ref) {
    Py_CLEAR(ref);
}

void set_ref(PyObject*& ref, PyObject* value) {
    Py_XINCREF(value);
    Py_XSETREF(ref, value);
}

PyObject* frame_code(PyObject* frame) {
    return reinterpret_cast<PyObject*>(PyFrame_GetCode(reinterpret_cast<PyFrameObject*>(frame)));
}

// Reads a frame-or-None attribute; returns false with an exception set on failure.
bool read_frame_attr(PyObject* dbg, const char* name, PyObject*& frame, PyObject*& code) {
    PyObject* value = PyObject_GetAttrString(dbg, name);
    if (!value) return false;
    if (value == Py_None || !PyFrame_Check(value)) {
        Py_DECREF(value);
        clear_ref(frame);
        clear_ref(code);
        return true;
    }
    Py_XSETREF(frame, value);
    Py_XSETREF(code, frame_code(value));
    return true;
}

int read_bool_attr(PyObject* dbg, const char* name) {
    PyObject* value = PyObject_GetAttrString(dbg, name);
    if (!value) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return -1;
        PyErr_Clear();
        return 0;
    }
    int truth = PyObject_IsTrue(value);
    Py_DECREF(value);
    return truth;
}

void release_opcode_codes(Session* s) {
    for (PyObject* code : s->opcode_codes) Py_DECREF(code);
    s->opcode_codes.clear();
}

// bdb 3.13 steps by instruction after set_trace: it marks the frames from enterframe down to
// botframe with f_trace_opcodes, and only those frames' code needs instruction events.
int collect_opcode_codes(Session* s) {
    release_opcode_codes(s);
    if (!s->opcodes) return 0;
    PyObject* frame = PyObject_GetAttrString(s->debugger, "enterframe");
    if (!frame) {
        PyErr_Clear();
        return 0;
    }
    PyObject* bot = PyObject_GetAttrString(s->debugger, "botframe");
    if (!bot) {
        Py_DECREF(frame);
        return -1;
    }
    while (frame && frame != Py_None && PyFrame_Check(frame)) {
        auto* f = reinterpret_cast<PyFrameObject*>(frame);
        if (frame_trace_opcodes(f)) s->opcode_codes.push_back(frame_code(frame));
        if (frame == bot) break;
        PyObject* back = reinterpret_cast<PyObject*>(PyFrame_GetBack(f));
        Py_DECREF(frame);
        frame = back;
    }
    Py_XDECREF(frame);
    Py_DECREF(bot);
    return 0;
}

int sync_session(Session* s) {
    PyObject* dbg = s->debugger;
    if (!read_frame_attr(dbg, "stopframe", s->stopframe, s->stopcode)) return -1;
    if (!read_frame_attr(dbg, "returnframe", s->returnframe, s->returncode)) return -1;
    PyObject* lineno = PyObject_GetAttrString(dbg, "stoplineno");
    if (!lineno) return -1;
    s->stoplineno = PyLong_Check(lineno) ? PyLong_AsLong(lineno) : 0;
    Py_DECREF(lineno);
    PyObject* bot = PyObject_GetAttrString(dbg, "botframe");
    if (!bot) return -1;
    s->botframe_none = bot == Py_None;
    Py_DECREF(bot);
    int quitting = read_bool_attr(dbg, "quitting");
    int opcodes = read_bool_attr(dbg, "trace_opcodes");
    if (quitting < 0 || opcodes < 0) return -1;
    s->quitting = quitting;
    s->opcodes = opcodes;
    s->stop_in_generator = s->stopcode && is_generator_code(s->stopcode);
    return collect_opcode_codes(s);
}

void derive_flags() {
    State& st = state();
    st.any_stepping = st.any_nontrivial = st.any_generator_stop = st.any_opcodes = false;
    st.any_calls = false;
    st.step_codes.clear();
    bool live = false;
    for (auto& [dbg, s] : st.by_debugger) {
        if (s->quitting) continue;
        live = true;
        st.any_calls |= s->stepping() || s->botframe_none;
        if (s->stopcode) st.step_codes.push_back(s->stopcode);
        if (s->returncode) st.step_codes.push_back(s->returncode);
        st.any_stepping |= s->stepping();
        st.any_nontrivial |= !s->continuing();
        st.any_generator_stop |= s->stop_in_generator;
        st.any_opcodes |= s->opcodes;
    }
    st.armed = live && (!st.breaks.empty() || st.any_nontrivial);
}

int resync(Session* s) {
    if (sync_session(s) < 0) return -1;
    derive_flags();
    return backend_reconfigure();
}

Session* session_of(PyObject* dbg) {
    State& st = state();
    auto it = st.by_debugger.find(dbg);
    return it == st.by_debugger.end() ? nullptr : it->second;
}

Session* ensure_session(PyObject* dbg) {
    if (Session* s = session_of(dbg)) return s;
    PyObject* dispatch = PyObject_GetAttrString(dbg, "trace_dispatch");
    if (!dispatch) return nullptr;
    auto* s = new Session;
    Py_INCREF(dbg);
    s->debugger = dbg;
    s->dispatch = dispatch;
    state().by_debugger[dbg] = s;
    return s;
}

void bind_thread(Session* s) {
    State& st = state();
    st.by_thread[PyThread_get_thread_ident()] = s;
    ++st.session_epoch;
}

// A thread without a session reached a breakpoint line: the fallback debugger chooses (or
// creates) the debugger that serves this thread.
Session* adopt(PyFrameObject* frame) {
    State& st = state();
    if (!st.fallback) return nullptr;
    PyObject* chosen = PyObject_CallMethod(st.fallback->debugger, "_dpdb_debugger_for_thread", "O",
                                           reinterpret_cast<PyObject*>(frame));
    if (!chosen) return nullptr;
    if (chosen == Py_None) {
        Py_DECREF(chosen);
        return nullptr;
    }
    Session* s = ensure_session(chosen);
    Py_DECREF(chosen);
    if (!s) return nullptr;
    bind_thread(s);
    if (resync(s) < 0) return nullptr;
    return s;
}

#if PY_VERSION_HEX < 0x030A0000
// 3.9 reports f_lineno from a field that only the tracing interpreter keeps current, and frames
// with f_trace may have run untraced under the PEP 523 gate: bring them up to date before bdb
// reads them (where, up, down, list).
void refresh_line_numbers() {
    for (PyFrameObject* f = PyEval_GetFrame(); f; f = f->f_back) {
        if (f->f_trace) f->f_lineno = PyCode_Addr2Line(f->f_code, f->f_lasti);
    }
}
#endif

// Calls the trace function the way CPython's trampoline does: "call" goes to the debugger's
// global dispatch, every other event to the frame's f_trace, and a non-None result becomes the
// frame's new f_trace.
int forward(Session* s, PyFrameObject* frame, Event event, PyObject* arg) {
    State& st = state();
    PyObject* callback;
    if (event == Event::kCall) {
        callback = s->dispatch;
    } else {
        if (!frame_trace(frame)) {
            Py_INCREF(s->dispatch);
            frame_trace(frame) = s->dispatch;
        }
        callback = frame_trace(frame);
    }
#if PY_VERSION_HEX < 0x030A0000
    refresh_line_numbers();
#endif
    PyObject* dbg = s->debugger;
    Py_INCREF(callback);
    Py_INCREF(dbg);
    PyObject* args[3] = {reinterpret_cast<PyObject*>(frame),
                         st.event_names[static_cast<int>(event)], arg ? arg : Py_None};
    ++st.forwarded;
#if PY_VERSION_HEX < 0x030D0000
    // As CPython's trampoline does for a trace function: pdb reads f_locals, and what `!x = 1`
    // writes there must reach the frame's fast locals (3.13's f_locals writes through itself).
    if (PyFrame_FastToLocalsWithError(frame) < 0) {
        Py_DECREF(callback);
        Py_DECREF(dbg);
        return -1;
    }
#endif
    PyObject* result = PyObject_Vectorcall(callback, args, 3, nullptr);
#if PY_VERSION_HEX < 0x030D0000
    PyFrame_LocalsToFast(frame, 1);
#endif
    Py_DECREF(callback);
    if (!result) {
        Py_CLEAR(frame_trace(frame));
        Py_DECREF(dbg);
        return -1;
    }
    if (result != Py_None) {
        Py_XSETREF(frame_trace(frame), result);
    } else {
        Py_DECREF(result);
    }
    // bdb changes botframe, stopframe and friends inside dispatch without always passing through
    // _set_stopinfo; the session may also have been detached meanwhile.
    int rc = 0;
    if (Session* again = session_of(dbg)) rc = resync(again);
    Py_DECREF(dbg);
    return rc;
}

bool traced(PyFrameObject* frame, PyObject* code, CodeInfo** info) {
    if (frame_trace(frame)) return true;
    // A frame entered while the engine answered calls in C has no f_trace; bdb would have given
    // it one exactly when its file held a breakpoint (break_anywhere).
    *info = code_info(code);
    return *info && (*info)->in_bp_file;
}

}  // namespace

bool is_step_code(PyObject* code) {
    for (PyObject* c : state().step_codes)
        if (c == code) return true;
    return false;
}

Session* current_session() {
    State& st = state();
    if (tls_cache.epoch != st.session_epoch) {
        auto it = st.by_thread.find(PyThread_get_thread_ident());
        tls_cache.session = it == st.by_thread.end() ? nullptr : it->second;
        tls_cache.epoch = st.session_epoch;
    }
    return tls_cache.session;
}

int breaks_of_file(PyObject* filename, const std::vector<int>** lines, PyObject** canonic_name) {
    State& st = state();
    if (st.breaks.empty()) return 0;
    PyObject* canonic = canonic_filename(filename);
    if (!canonic) return -1;
    const char* utf8 = PyUnicode_Check(canonic) ? PyUnicode_AsUTF8(canonic) : nullptr;
    if (!utf8) {
        PyErr_Clear();
        return 0;
    }
    auto it = st.breaks.find(utf8);
    if (it != st.breaks.end()) {
        *lines = &it->second;
        if (canonic_name) *canonic_name = canonic;
    }
    return 0;
}

namespace {

// pdb's "break function" makes a Breakpoint with a funcname on the def line (co_firstlineno).
// bdb then considers every line of code starting there: a frame of that function stops at the
// first line bdb sees it run, which the breakpoint learns then (func_first_executable_line) and
// stops at from then on. So once every such breakpoint of this code's name has learned its line,
// those lines are the only ones it can stop at, besides the code's own breakpoint lines.
// Returns 1 while some breakpoint has yet to learn its line, else 0 with the learned lines in
// `info`; -1 with an exception set.
int learn_function_lines(PyObject* canonic, PyObject* code, CodeInfo* info) {
    auto* co = reinterpret_cast<PyCodeObject*>(code);
    PyObject* bplist = PyObject_GetAttrString(state().breakpoint_class, "bplist");
    PyObject* key = bplist ? Py_BuildValue("(Oi)", canonic, co->co_firstlineno) : nullptr;
    PyObject* found = key && PyDict_Check(bplist) ? PyDict_GetItemWithError(bplist, key) : nullptr;
    PyObject* breakpoints = found ? PySequence_Fast(found, "bplist entry") : nullptr;
    Py_XDECREF(key);
    Py_XDECREF(bplist);
    if (!breakpoints) return PyErr_Occurred() ? -1 : 1;
    int pending = 0;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(breakpoints) && !pending; ++i) {
        PyObject* bp = PySequence_Fast_GET_ITEM(breakpoints, i);
        PyObject* funcname = PyObject_GetAttrString(bp, "funcname");
        if (!funcname) {
            pending = -1;
            break;
        }
        // A line breakpoint on the def line stops there only: it is in `lines` already.
        int ours = PyUnicode_Check(funcname) ? PyUnicode_Compare(funcname, co->co_name) == 0 : 0;
        Py_DECREF(funcname);
        if (!ours) continue;
        PyObject* first = PyObject_GetAttrString(bp, "func_first_executable_line");
        long line = first && PyLong_Check(first) ? PyLong_AsLong(first) : 0;
        Py_XDECREF(first);
        if (!first || (line == -1 && PyErr_Occurred())) {
            pending = -1;
        } else if (line <= 0) {
            pending = 1;
        } else {
            info->function_lines.push_back(static_cast<int>(line));
        }
    }
    Py_DECREF(breakpoints);
    return pending;
}

}  // namespace

CodeInfo* code_info(PyObject* code) {
    if (CodeInfo* known = known_code_info(code)) return known;
    State& st = state();
    auto* info = static_cast<CodeInfo*>(code_extra(code, st.extra_index));
    if (!info) {
        info = new CodeInfo;
        if (DPDB_SET_EXTRA(code, st.extra_index, info) < 0) {
            delete info;
            return nullptr;
        }
#if PY_VERSION_HEX >= 0x030C0000
        info->fast.reset(fast_copy_derived(code));
#endif
    }
    info->generation = st.generation;
    info->in_bp_file = false;
    info->all_lines = false;
    info->lines = nullptr;
    info->function_lines.clear();
#if PY_VERSION_HEX < 0x030C0000
    info->prepared = false;
    info->needs_trace = false;
    info->patched = nullptr;
    info->patched_info = nullptr;
#else
    info->has_break_line = -1;
    info->start_carries_break = -1;
#endif
    const std::vector<int>* lines = nullptr;
    PyObject* canonic = nullptr;
    if (breaks_of_file(reinterpret_cast<PyCodeObject*>(code)->co_filename, &lines, &canonic) < 0) {
        info->generation = 0;
        return nullptr;
    }
    if (lines) {
        info->in_bp_file = true;
        info->lines = lines;
        if (std::binary_search(lines->begin(), lines->end(),
                               reinterpret_cast<PyCodeObject*>(code)->co_firstlineno)) {
            int pending = learn_function_lines(canonic, code, info);
            if (pending < 0) {
                info->generation = 0;
                return nullptr;
            }
            info->all_lines = pending != 0;
        }
    }
    return info;
}

int is_bp_filename(PyObject* filename) {
    if (!PyUnicode_Check(filename)) return 0;
    const std::vector<int>* lines = nullptr;
    if (breaks_of_file(filename, &lines) < 0) return -1;
    return lines ? 1 : 0;
}

PyObject* heap_objects() {
    PyObject* gc = PyImport_ImportModule("gc");
    if (!gc) return nullptr;
    PyObject* objects = PyObject_CallMethod(gc, "get_objects", nullptr);
    Py_DECREF(gc);
    if (objects && !PyList_Check(objects)) {
        Py_DECREF(objects);
        PyErr_SetString(PyExc_TypeError, "gc.get_objects() did not return a list");
        return nullptr;
    }
    return objects;
}

long frozen_objects() {
    PyObject* gc = PyImport_ImportModule("gc");
    PyObject* count = gc ? PyObject_CallMethod(gc, "get_freeze_count", nullptr) : nullptr;
    Py_XDECREF(gc);
    if (!count) return -1;
    long n = PyLong_AsLong(count);
    Py_DECREF(count);
    return n;
}

int handle(PyFrameObject* frame, PyObject* code, Event event, PyObject* arg, int line) {
    Session* s = current_session();
    CodeInfo* info = nullptr;
    switch (event) {
        case Event::kCall:
            if (!s || s->quitting) return 0;
            if (s->botframe_none || !s->stopframe ||
                reinterpret_cast<PyObject*>(frame) == s->stopframe)
                return forward(s, frame, event, arg);
            return 0;
        case Event::kLine:
        case Event::kOpcode: {
            if (!traced(frame, code, &info)) return 0;
            if (!info && !(info = code_info(code))) return -1;
            bool stop = s && !s->quitting &&
                        (!s->stopframe || (reinterpret_cast<PyObject*>(frame) == s->stopframe &&
                                           s->stoplineno != -1 && line >= s->stoplineno));
            if (event == Event::kOpcode) stop = stop && frame_trace_opcodes(frame);
            if (!stop && !info->is_bp_line(line)) return 0;
            if (!stop && event == Event::kLine && conditions_false(frame, code, info, line))
                return PyErr_Occurred() ? -1 : 0;
            int rc = 0;
            if (!s) s = adopt(frame);
            if (s && !s->quitting) rc = forward(s, frame, event, arg);
            if (!s && PyErr_Occurred()) rc = -1;
            conditions_forget();
            return rc;
        }
        case Event::kReturn:
            if (!s || s->quitting) return 0;
            if (s->stopframe && reinterpret_cast<PyObject*>(frame) != s->stopframe &&
                reinterpret_cast<PyObject*>(frame) != s->returnframe)
                return 0;
            if (!traced(frame, code, &info)) return 0;
            return forward(s, frame, event, arg);
        case Event::kException:
            if (!s || s->quitting) return 0;
            if (s->stopframe && reinterpret_cast<PyObject*>(frame) != s->stopframe &&
                !s->stop_in_generator)
                return 0;
            if (!traced(frame, code, &info)) return 0;
            return forward(s, frame, event, arg);
    }
    return 0;
}

// ---- operations used by the module ----

int engine_init(PyObject* canonic) {
    State& st = state();
    if (st.initialised) {
        set_ref(st.canonic, canonic);
        return 0;
    }
    st.extra_index = DPDB_EXTRA_INDEX(free_code_info);
    if (st.extra_index < 0) {
        PyErr_SetString(PyExc_RuntimeError, "dpdb engine: no co_extra slot left");
        return -1;
    }
    static const char* names[5] = {"call", "line", "return", "exception", "opcode"};
    for (int i = 0; i < 5; ++i) {
        st.event_names[i] = PyUnicode_InternFromString(names[i]);
        if (!st.event_names[i]) return -1;
    }
    st.canonic_cache = PyDict_New();
    PyObject* bdb = PyImport_ImportModule("bdb");
    if (!bdb || !st.canonic_cache) return -1;
    st.breakpoint_class = PyObject_GetAttrString(bdb, "Breakpoint");
    Py_DECREF(bdb);
    if (!st.breakpoint_class) return -1;
    set_ref(st.canonic, canonic);
    if (backend_init() < 0) return -1;
    st.initialised = true;
    return 0;
}

int engine_refresh() {
    State& st = state();
    PyObject* bplist = PyObject_GetAttrString(st.breakpoint_class, "bplist");
    if (!bplist) return -1;
    if (!PyDict_Check(bplist)) {
        Py_DECREF(bplist);
        PyErr_SetString(PyExc_TypeError, "bdb.Breakpoint.bplist is not a dict");
        return -1;
    }
    std::unordered_map<std::string, std::vector<int>> breaks;
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(bplist, &pos, &key, &value)) {
        if (!PyTuple_Check(key) || PyTuple_GET_SIZE(key) != 2) continue;
        PyObject* file = PyTuple_GET_ITEM(key, 0);
        long line = PyLong_AsLong(PyTuple_GET_ITEM(key, 1));
        const char* utf8 = PyUnicode_Check(file) ? PyUnicode_AsUTF8(file) : nullptr;
        if (!utf8 || (line == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            continue;
        }
        breaks[utf8].push_back(static_cast<int>(line));
    }
    Py_DECREF(bplist);
    for (auto& [file, lines] : breaks) std::sort(lines.begin(), lines.end());
    st.breaks = std::move(breaks);
    ++st.generation;
    derive_flags();
    return backend_reconfigure();
}

int engine_attach(PyObject* dbg) {
    State& st = state();
    Session* s = ensure_session(dbg);
    if (!s) return -1;
    // A thread has one debugger at a time: the one set_trace() was last called on. A debugger
    // left without threads (pdb.set_trace() makes a new Pdb per call) is forgotten.
    auto bound = st.by_thread.find(PyThread_get_thread_ident());
    Session* previous = bound == st.by_thread.end() ? nullptr : bound->second;
    bind_thread(s);
    if (previous && previous != s) {
        bool orphan = true;
        for (auto& [tid, other] : st.by_thread) orphan &= other != previous;
        if (orphan && engine_detach(previous->debugger) < 0) return -1;
    }
    st.fallback = s;
    if (sync_session(s) < 0) return -1;
    return engine_refresh();
}

int engine_update(PyObject* dbg) {
    Session* s = session_of(dbg);
    return s ? resync(s) : 0;
}

int engine_detach(PyObject* dbg) {
    State& st = state();
    Session* s = session_of(dbg);
    if (!s) return 0;
    st.by_debugger.erase(dbg);
    for (auto it = st.by_thread.begin(); it != st.by_thread.end();) {
        it = it->second == s ? st.by_thread.erase(it) : std::next(it);
    }
    ++st.session_epoch;
    if (st.fallback == s)
        st.fallback = st.by_debugger.empty() ? nullptr : st.by_debugger.begin()->second;
    release_opcode_codes(s);
    clear_ref(s->stopframe);
    clear_ref(s->returnframe);
    clear_ref(s->stopcode);
    clear_ref(s->returncode);
    clear_ref(s->dispatch);
    clear_ref(s->debugger);
    delete s;
    derive_flags();
    return backend_reconfigure();
}

}  // namespace dpdb::engine
