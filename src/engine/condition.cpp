#include "engine/condition.hpp"

#include <memory>

#include "agent/log_budget.hpp"
#include "engine/condition_eval.hpp"
#include "engine/condition_fast.hpp"
#include "engine/engine.hpp"
#include "engine/frame_access.hpp"

namespace dpdb::engine {
namespace {

bool g_allowed = true;
PyObject* g_zero = nullptr;

struct Names {
    PyObject* bplist;
    PyObject* enabled;
    PyObject* funcname;
    PyObject* cond;
    PyObject* hits;
    PyObject* ignore;
    PyObject* dpdb_log;
};
Names g_names{};
// What a snapshot compares by identity (3.14+), in BreakpointSnapshot::seen's order.
PyObject* g_seen_names[BreakpointSnapshot::kSeen];

bool ensure_names() {
    if (g_names.hits) return true;
    g_zero = PyLong_FromLong(0);
    g_names = {PyUnicode_InternFromString("bplist"),   PyUnicode_InternFromString("enabled"),
               PyUnicode_InternFromString("funcname"), PyUnicode_InternFromString("cond"),
               PyUnicode_InternFromString("hits"),     PyUnicode_InternFromString("ignore"),
               PyUnicode_InternFromString("dpdb_log")};
    g_seen_names[0] = g_names.enabled;
    g_seen_names[1] = g_names.funcname;
    g_seen_names[2] = g_names.cond;
    g_seen_names[3] = g_names.dpdb_log;
    return g_zero && g_names.bplist && g_names.enabled && g_names.funcname && g_names.cond &&
           g_names.hits && g_names.ignore && g_names.dpdb_log;
}

// The line among those the cache holds (remembered as the last one found), or null.
ConditionLine* known_line(ConditionCache& cache, int line) {
    if (cache.last && cache.last->line == line) return cache.last;
    for (ConditionLine& at : cache.lines)
        if (at.line == line) return cache.last = &at;
    return nullptr;
}

// The line's bdb.Breakpoint.bplist[file of code, line] (kept by the code's cache for this
// generation of breakpoints: a key that comes or goes starts a new one), or null.
ConditionLine* breakpoints_at(PyObject* code, CodeInfo* info, int line) {
    ConditionCache& cache = *info->conditions;
    if (cache.generation != state().generation) {
        cache.last = nullptr;
        cache.lines.clear();
        ++cache.epoch;
        cache.generation = state().generation;
    }
    if (ConditionLine* known = known_line(cache, line)) return known;
    PyObject* file = canonic_filename(reinterpret_cast<PyCodeObject*>(code)->co_filename);
    if (!file) return nullptr;
    PyObject* bplist = PyObject_GetAttr(state().breakpoint_class, g_names.bplist);
    PyObject* key = bplist ? Py_BuildValue("(Oi)", file, line) : nullptr;
    PyObject* found = key && PyDict_Check(bplist) ? PyDict_GetItemWithError(bplist, key) : nullptr;
    ConditionLine* at = nullptr;
    if (found && PyList_Check(found)) {
        Py_INCREF(found);
        at = &cache.lines.emplace_back(line, found);
    }
    Py_XDECREF(key);
    Py_XDECREF(bplist);
    return at;
}

// Whether the breakpoint's dict holds the objects effective() reads (enabled, funcname, cond,
// dpdb_log) as snapped.
bool same_objects(const BreakpointSnapshot* snap) {
    for (int i = 0; i < BreakpointSnapshot::kSeen; ++i) {
        PyObject* now = PyDict_GetItemWithError(snap->dict, g_seen_names[i]);
        if (!now && PyErr_Occurred()) PyErr_Clear();
        if (now != snap->seen[i]) return false;
    }
    return true;
}

#if PY_VERSION_HEX < 0x030E0000
// The version tag CPython gives a dict at every change (PEP 509; deprecated in 3.12, kept there
// and in 3.13): it covers every field, hits included. 3.13 changes no tag where an instance's
// attributes live in its inline values, even once a dict is made for them (it shares them), so
// there a breakpoint is given a dict of its own (dict_of).
constexpr bool kVersionTags = true;
std::uint64_t dict_version(PyObject* dict) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    return reinterpret_cast<PyDictObject*>(dict)->ma_version_tag;
#pragma GCC diagnostic pop
}
bool unchanged(const BreakpointSnapshot* snap) {
    return dict_version(snap->dict) == snap->version;
}
#else
// 3.14 has no version tag: a snapshot is current while the objects effective() reads (enabled,
// funcname, cond, dpdb_log) are the same objects; hits are read at every change. Untested here.
constexpr bool kVersionTags = false;
std::uint64_t dict_version(PyObject*) {
    return 0;
}
bool unchanged(const BreakpointSnapshot* snap) {
    return same_objects(snap);
}
#endif

// Py_NewRef and Py_XNewRef, which 3.9 lacks.
PyObject* new_ref(PyObject* o) {
    Py_INCREF(o);
    return o;
}
PyObject* xnew_ref(PyObject* o) {
    Py_XINCREF(o);
    return o;
}

bool current(const BreakpointSnapshot* snap, PyObject* bp) {
    return snap && snap->valid && snap->bp == bp && unchanged(snap);
}

// Snapshots holding hits counted in C (BreakpointSnapshot::pending).
std::vector<BreakpointSnapshot*> g_dirty;

void count_hit(BreakpointSnapshot& snap) {
    if (snap.pending++ == 0) g_dirty.push_back(&snap);
}

// bp.hits += pending, keeping the snapshot current if it was; an exception already set (a
// snapshot dropped while one propagates) is kept. No Python code runs.
void write_pending(BreakpointSnapshot& snap) {
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    const bool was_current = current(&snap, snap.bp);
    PyObject* now = PyDict_GetItemWithError(snap.dict, g_names.hits);
    PyObject* step = now ? PyLong_FromUnsignedLongLong(snap.pending) : nullptr;
    PyObject* next = step ? PyNumber_Add(now, step) : nullptr;
    if (next && PyDict_SetItem(snap.dict, g_names.hits, next) == 0 && was_current) {
        Py_INCREF(next);
        Py_SETREF(snap.hits, next);
        snap.version = dict_version(snap.dict);
    }
    if (PyErr_Occurred()) PyErr_WriteUnraisable(snap.bp);
    Py_XDECREF(step);
    Py_XDECREF(next);
    PyErr_Restore(type, value, traceback);
    snap.pending = 0;
}

void flush(BreakpointSnapshot& snap) {
    if (!snap.pending) return;
    for (auto it = g_dirty.begin(); it != g_dirty.end(); ++it) {
        if (*it == &snap) {
            g_dirty.erase(it);
            break;
        }
    }
    write_pending(snap);
}

// A Breakpoint's attribute, new reference or null. bdb.Breakpoint keeps them in its instance
// dict, read there without the type's lookup; a subclass (which could make them properties)
// through getattr.
PyObject* attribute(PyObject* bp, PyObject* dict, PyObject* name) {
    PyObject* value = dict ? PyDict_GetItemWithError(dict, name) : nullptr;
    if (value) {
        Py_INCREF(value);
        return value;
    }
    return PyErr_Occurred() ? nullptr : PyObject_GetAttr(bp, name);
}

PyObject* dict_of(PyObject* bp) {
    if (Py_TYPE(bp) != reinterpret_cast<PyTypeObject*>(state().breakpoint_class)) return nullptr;
    PyObject* dict = PyObject_GenericGetDict(bp, nullptr);
    if (!dict) PyErr_Clear();
#if PY_VERSION_HEX >= 0x030D0000 && PY_VERSION_HEX < 0x030E0000
    // A dict sharing the inline values (above): `bp.__dict__ = <a copy>` (the type's own
    // descriptor, which retires the inline values) makes every later change go through the copy.
    if (dict && reinterpret_cast<PyDictObject*>(dict)->ma_values) {
        PyObject* own = PyDict_New();
        const bool moved = own && PyDict_Update(own, dict) == 0 &&
                           PyObject_SetAttrString(bp, "__dict__", own) == 0;
        Py_DECREF(dict);
        dict = moved ? own : nullptr;
        if (!moved) {
            Py_XDECREF(own);
            PyErr_Clear();  // no dict: no snapshot, every hit reads the attributes
        }
    }
#endif
    return dict;
}

// The attributes bdb.effective() reads of one breakpoint (new references, null if missing), from
// its snapshot while nothing changed the breakpoint since.
struct Fields {
    PyObject* bp = nullptr;
    PyObject* dict = nullptr;
    bool enabled = false;
    PyObject* cond = nullptr;
    bool has_cond = false;
    bool by_function = true;
    bool logpoint = false;         // python/dpdb/_logpoints.py's: a message when due, never a stop
    PyObject* compiled = nullptr;  // the condition's code, once known (borrowed)
    BreakpointSnapshot* snap = nullptr;

    Fields() = default;
    void read(PyObject* breakpoint, BreakpointSnapshot* snapshot) {
        bp = breakpoint;
        Py_INCREF(bp);
        if (current(snapshot, bp)) {
            snap = snapshot;
            dict = new_ref(snap->dict);
            enabled = snap->enabled;
            by_function = snap->by_function;
            cond = xnew_ref(snap->cond);
            has_cond = snap->has_cond;
            logpoint = snap->logpoint;
            compiled = snap->compiled;
            return;
        }
        dict = dict_of(bp);
        PyObject* on = attribute(bp, dict, g_names.enabled);
        enabled = on && PyObject_IsTrue(on) > 0;
        Py_XDECREF(on);
        PyObject* funcname = attribute(bp, dict, g_names.funcname);
        by_function = !funcname || funcname != Py_None;
        Py_XDECREF(funcname);
        cond = attribute(bp, dict, g_names.cond);
        has_cond = cond && PyObject_IsTrue(cond) > 0;
        // Set on the instance (_logpoints.py): a plain breakpoint has none, and getattr's
        // AttributeError would cost more than the rest of the hit.
        PyObject* log = dict ? PyDict_GetItemWithError(dict, g_names.dpdb_log) : nullptr;
        Py_XINCREF(log);
        if (!dict && !(log = PyObject_GetAttr(bp, g_names.dpdb_log))) PyErr_Clear();
        logpoint = log && log != Py_None;
        Py_XDECREF(log);
        if (snapshot && dict && !PyErr_Occurred()) keep(snapshot);
    }
    // Read after the fields, with no Python code run between: the dict's version covers them.
    void keep(BreakpointSnapshot* snapshot) {
        snapshot->clear();
        PyObject* hits = PyDict_GetItemWithError(dict, g_names.hits);
        if (!hits || !PyLong_CheckExact(hits)) return;
        snapshot->bp = new_ref(bp);
        snapshot->dict = new_ref(dict);
        snapshot->enabled = enabled;
        snapshot->by_function = by_function;
        snapshot->cond = xnew_ref(cond);
        snapshot->has_cond = has_cond;
        snapshot->logpoint = logpoint;
        snapshot->hits = new_ref(hits);
        snapshot->version = dict_version(dict);
        for (int i = 0; i < BreakpointSnapshot::kSeen; ++i) {
            snapshot->seen[i] = xnew_ref(PyDict_GetItemWithError(dict, g_seen_names[i]));
            if (!snapshot->seen[i] && PyErr_Occurred()) return snapshot->clear();
        }
        snapshot->valid = true;
        snap = snapshot;
    }
    // The condition's code, once bdb's cond is known to be one the engine evaluates.
    void learn_compiled(PyObject* code, const ConditionSlots* slots) {
        compiled = code;
        if (current(snap, bp)) {
            snap->compiled = code;
            snap->slots = snap->by_function || !snap->has_cond ? nullptr : slots;
        }
    }
    ~Fields() {
        Py_XDECREF(cond);
        Py_XDECREF(dict);
        Py_XDECREF(bp);
    }
    Fields(const Fields&) = delete;
    Fields& operator=(const Fields&) = delete;

    // bp.<name> += delta; false with an exception set on failure. The hits of an unchanged
    // breakpoint come from its snapshot, which the change then follows.
    bool add(PyObject* name, long delta) {
        const bool known = kVersionTags && name == g_names.hits && current(snap, bp);
        PyObject* now = known ? new_ref(snap->hits) : attribute(bp, dict, name);
        PyObject* step = now ? PyLong_FromLong(delta) : nullptr;
        PyObject* next = step ? PyNumber_Add(now, step) : nullptr;
        int rc = !next  ? -1
                 : dict ? PyDict_SetItem(dict, name, next)
                        : PyObject_SetAttr(bp, name, next);
        if (known && rc == 0) {
            Py_SETREF(snap->hits, new_ref(next));
            snap->version = dict_version(dict);
        } else if (kVersionTags && snap && snap->bp == bp) {
            snap->valid = false;
        }
        Py_XDECREF(now);
        Py_XDECREF(step);
        Py_XDECREF(next);
        return rc == 0;
    }
    // bdb's `b.ignore > 0`, then `b.ignore -= 1`: whether this hit is ignored.
    bool ignored() {
        PyObject* now = attribute(bp, dict, g_names.ignore);
        int positive = now ? PyObject_RichCompareBool(now, g_zero, Py_GT) : -1;
        Py_XDECREF(now);
        return positive > 0 && add(g_names.ignore, -1);
    }
};

enum class Answer { kBdb, kNoStop, kStop };

// Where a line runs in two code objects (a function and its generator expression), each holds a
// snapshot of the breakpoint, and each one's hits written back change the dict's version under
// the other's. A snapshot whose dict still holds the objects effective() reads stays current, its
// hits read again.
bool follow_hits(BreakpointSnapshot& snap, PyObject* list, Py_ssize_t i) {
    if (!kVersionTags || !snap.valid || snap.bp != PyList_GET_ITEM(list, i) || !same_objects(&snap))
        return false;
    PyObject* hits = PyDict_GetItemWithError(snap.dict, g_names.hits);
    if (!hits || !PyLong_CheckExact(hits)) {
        if (PyErr_Occurred()) PyErr_Clear();
        return false;
    }
    Py_SETREF(snap.hits, new_ref(hits));
    snap.version = dict_version(snap.dict);
    return true;
}

// One breakpoint of a line, as all_false_in_c reads it: -1 where the engine cannot answer (changed
// since its snapshot but for hits, see follow_hits; no condition answered in C; the condition not
// false), 0 disabled, 1 enabled and its condition false.
int answer_in_c(const FrameView& view, BreakpointSnapshot& snap, PyObject* list, Py_ssize_t i) {
    if (!current(&snap, PyList_GET_ITEM(list, i)) && !follow_hits(snap, list, i)) return -1;
    if (!snap.enabled) return 0;
    return snap.slots && fast_truth_in(view, *snap.slots) == 0 ? 1 : -1;
}

// The common hit, with no Python code run and no attribute written: every breakpoint of the line
// unchanged since its snapshot (but for hits: follow_hits), each enabled one with a condition
// answered in C and false there. Its hits are counted in C (effective() counts every enabled
// breakpoint when none stops).
// all_false_in_c for a line of several breakpoints.
bool all_false_of_several(const FrameView& view, ConditionLine& at, Py_ssize_t n) {
    if (n > static_cast<Py_ssize_t>(at.snapshots.size())) return false;
    bool any = false;
    auto snap = at.snapshots.begin();
    for (Py_ssize_t i = 0; i < n; ++i, ++snap) {
        const int answer = answer_in_c(view, *snap, at.list, i);
        if (answer < 0) return false;
        any = any || answer;
    }
    if (!any) return false;
    snap = at.snapshots.begin();
    for (Py_ssize_t i = 0; i < n; ++i, ++snap)
        if (snap->enabled) count_hit(*snap);
    return true;
}

bool all_false_in_c(const FrameView& view, ConditionLine& at) {
    const Py_ssize_t n = PyList_GET_SIZE(at.list);
    if (n == 1) {
        // The common line, read without the deque's size or walk (a third of the guard's own
        // cost).
        if (at.snapshots.empty()) return false;
        BreakpointSnapshot& only = at.snapshots.front();
        if (answer_in_c(view, only, at.list, 0) <= 0) return false;
        count_hit(only);
    } else if (!all_false_of_several(view, at, n)) {
        return false;
    }
    ++state().conditions_in_c;
    return true;
}

// A line holding logpoints: dpdb's Debugger serves them (the message of each one due) before
// bdb.effective() decides among the others; the engine takes the line only while every condition
// there is false, when serving sends nothing and effective() stops nowhere, and counts the hits
// as the two count them. A due line's conditions run again there.
template <typename Truth>
Answer all_false(Fields* fields, Py_ssize_t n, Truth&& truth) {
    for (Py_ssize_t i = 0; i < n; ++i)
        if (fields[i].enabled && !fields[i].has_cond) return Answer::kBdb;
    for (Py_ssize_t i = 0; i < n; ++i)
        if (fields[i].enabled && truth(fields[i]) != 0) return Answer::kBdb;
    for (Py_ssize_t i = 0; i < n; ++i)
        if (fields[i].enabled) fields[i].add(g_names.hits, 1);
    return Answer::kNoStop;
}

// The agent's logpoint budget (agent/log_budget.hpp), or null where dpdb._agent is not there.
const agent::LogBudget* log_budget() {
    static const agent::LogBudget* budget = [] {
        auto* found =
            static_cast<const agent::LogBudget*>(PyCapsule_Import(agent::kLogBudgetCapsule, 0));
        if (!found) PyErr_Clear();
        return found;
    }();
    return budget;
}

// A line of logpoints only, while no message can be made (no token left): python/dpdb/
// _logpoints.py's serve() would count each enabled one's hit, run its condition, its ignore count,
// and drop the message of each due one (a condition that raises makes it due). The engine does the
// same without bdb and without a Python call of its own. kBdb, with nothing run or changed, where
// serving could make a message (a token is there, or this thread is making one) or the line holds
// another breakpoint.
template <typename Truth>
Answer all_dropped(Fields* fields, Py_ssize_t n, Truth&& truth) {
    const agent::LogBudget* budget = log_budget();
    if (!budget || budget->making() || budget->has_token()) return Answer::kBdb;
    for (Py_ssize_t i = 0; i < n; ++i)
        if (fields[i].enabled && !fields[i].logpoint) return Answer::kBdb;
    for (Py_ssize_t i = 0; i < n; ++i) {
        Fields& bp = fields[i];
        if (!bp.enabled) continue;
        bp.add(g_names.hits, 1);
        if ((bp.has_cond && truth(bp) == 0) || bp.ignored()) continue;
        budget->drop();
        ++state().logpoints_dropped;
    }
    if (PyErr_Occurred()) PyErr_Clear();
    return Answer::kNoStop;
}

// bdb.effective(file, line, frame) for a line whose breakpoints all have no function name, some
// a condition the engine can evaluate: kStop with the breakpoint and effective()'s flag, or
// kNoStop, with hits and ignore counts changed as effective() changes them. kBdb, with nothing
// evaluated or changed, where bdb must decide.
Answer effective(const FrameView& view, PyObject* code, CodeInfo* info, int line,
                 PyObject** stop_at, bool* flag) {
    if (!ensure_names()) info = nullptr;
    if (info && !info->conditions) info->conditions = std::make_unique<ConditionCache>();
    ConditionLine* at = info ? breakpoints_at(code, info, line) : nullptr;
    if (!at) return Answer::kBdb;
    if (all_false_in_c(view, *at)) return Answer::kNoStop;
    // From here on hits are read and written as bdb does.
    for (BreakpointSnapshot& snap : at->snapshots) flush(snap);
    PyObject* breakpoints = at->list;
    // What effective() reads of each breakpoint, read once before any condition runs.
    constexpr Py_ssize_t kMaxBreakpoints = 8;
    const Py_ssize_t n = PyList_GET_SIZE(breakpoints);
    if (n > kMaxBreakpoints) return Answer::kBdb;
    while (at->snapshots.size() < static_cast<std::size_t>(n)) at->snapshots.emplace_back();
    Fields fields[kMaxBreakpoints];
    bool any_cond = false, any_log = false;
    for (Py_ssize_t i = 0; i < n; ++i) {
        Fields& bp = fields[i];
        bp.read(PyList_GET_ITEM(breakpoints, i), &at->snapshots[i]);
        if (!bp.enabled) continue;
        if (bp.by_function) return Answer::kBdb;
        if (bp.has_cond) {
            PyObject* compiled = evaluable(view, code, info, bp.cond, bp.compiled);
            if (!compiled) return Answer::kBdb;
            if (!bp.compiled) bp.learn_compiled(compiled, slots_known(code, info, compiled));
        }
        any_cond |= bp.has_cond;
        any_log |= bp.logpoint;
    }
    // Plain breakpoints only: nothing to gain, bdb decides as ever.
    if (!any_cond && !any_log) return Answer::kBdb;
    // The snapshots are the line's for this generation: another thread that runs a condition
    // meanwhile may start a new one.
    const std::uint64_t epoch = info->conditions->epoch;
    auto truth = [&](Fields& bp) {
        int value = truth_of(view, code, info, bp.cond, bp.compiled);
        if (info->conditions->epoch != epoch)
            for (Py_ssize_t i = 0; i < n; ++i) fields[i].snap = nullptr;
        return value;
    };
    if (any_log) {
        const Answer dropped = all_dropped(fields, n, truth);
        return dropped != Answer::kBdb || !any_cond ? dropped : all_false(fields, n, truth);
    }
    Answer answer = Answer::kNoStop;
    for (Py_ssize_t i = 0; answer == Answer::kNoStop && i < n; ++i) {
        Fields& bp = fields[i];
        if (!bp.enabled) continue;
        bp.add(g_names.hits, 1);
        int value = bp.has_cond ? truth(bp) : 1;
        if (value == 0 || (value > 0 && bp.ignored())) continue;
        answer = Answer::kStop;
        *flag = value > 0;
        Py_INCREF(bp.bp);
        *stop_at = bp.bp;
    }
    if (PyErr_Occurred()) PyErr_Clear();
    return answer;
}

// effective()'s answer for a line bdb is about to hear of, kept for bdb (take_verdict) so that
// no condition runs twice: the engine's own thread's, as bdb asks within the same call.
struct Verdict {
    PyObject* frame = nullptr;  // strong
    int line = 0;
    PyObject* bp = nullptr;  // strong
    bool flag = false;
};
thread_local Verdict t_verdict;

void keep_verdict(PyFrameObject* frame, int line, PyObject* bp, bool flag) {
    conditions_forget();
    Py_INCREF(frame);
    t_verdict = {reinterpret_cast<PyObject*>(frame), line, bp, flag};
}

// Answers the line from `view` (`frame`, if known, is its frame object; else it is made when
// bdb must hear of the line).
bool answer_line(const FrameView& view, PyFrameObject* frame, PyObject* code, CodeInfo* info,
                 int line) {
    if (!g_allowed) return false;
    if (frame && t_verdict.frame == reinterpret_cast<PyObject*>(frame) && t_verdict.line == line)
        return false;  // answered already (3.12's callback, 3.9-3.11's check): bdb takes it
    PyObject* bp = nullptr;
    bool flag = false;
    Answer answer = effective(view, code, info, line, &bp, &flag);
    if (raise_escaping()) {
        Py_XDECREF(bp);
        return true;
    }
    if (answer == Answer::kStop) {
        if (!frame) frame = PyEval_GetFrame();
        if (frame) {
            keep_verdict(frame, line, bp, flag);
        } else {
            Py_DECREF(bp);
        }
    }
    if (answer == Answer::kNoStop) ++state().conditions_false;
    return answer == Answer::kNoStop;
}

}  // namespace

void BreakpointSnapshot::clear() {
    flush(*this);
    valid = false;
    compiled = nullptr;
    slots = nullptr;
    for (PyObject*& object : seen) Py_CLEAR(object);
    Py_CLEAR(bp);
    Py_CLEAR(dict);
    Py_CLEAR(cond);
    Py_CLEAR(hits);
}

ConditionCache::~ConditionCache() {
    for (ConditionSlots& entry : entries) {
        Py_XDECREF(entry.wrapper);
        Py_XDECREF(entry.function);
        delete entry.fast;
    }
}

void conditions_allow(bool on) {
    g_allowed = on;
}

bool conditions_false(PyFrameObject* frame, PyObject* code, CodeInfo* info, int line) {
    if (!g_allowed) return false;
#if PY_VERSION_HEX >= 0x030B0000
    PyObject* globals = PyFrame_GetGlobals(frame);
    Py_DECREF(globals);  // the frame holds it
#else
    PyObject* globals = frame->f_globals;
#endif
    return answer_line(FrameView{frame_localsplus(frame), globals, frame}, frame, code, info, line);
}

#if PY_VERSION_HEX >= 0x030B0000
namespace {
// The frame that runs `code` (a function's) on this thread, read without its frame object.
bool running_view(PyObject* code, FrameView* view) {
    if (!(reinterpret_cast<PyCodeObject*>(code)->co_flags & CO_OPTIMIZED)) return false;
    InterpreterFrameHead* running = running_frame(PyThreadState_Get());
    if (!running || running->pointers[kFrameCode] != code) return false;
    *view = {running->localsplus, static_cast<PyObject*>(running->pointers[kFrameGlobals]),
             nullptr};
    return true;
}
}  // namespace

bool conditions_false_running(PyObject* code, CodeInfo* info, int line) {
    FrameView view{};
    return g_allowed && running_view(code, &view) && answer_line(view, nullptr, code, info, line);
}

bool conditions_false_known_running(PyObject* code, CodeInfo* info, int line) {
    FrameView view{};
    return running_view(code, &view) && conditions_false_known(view, info, line);
}
#endif

bool conditions_false_known(const FrameView& view, CodeInfo* info, int line) {
    if (!g_allowed || !info->conditions) return false;
    ConditionCache& cache = *info->conditions;
    if (cache.generation != state().generation) return false;
    ConditionLine* at = known_line(cache, line);
    if (!at || !all_false_in_c(view, *at)) return false;
    ++state().conditions_false;
    return true;
}

void conditions_forget() {
    Py_CLEAR(t_verdict.frame);
    Py_CLEAR(t_verdict.bp);
}

void conditions_flush_hits() {
    std::vector<BreakpointSnapshot*> dirty;
    dirty.swap(g_dirty);
    for (BreakpointSnapshot* snap : dirty) write_pending(*snap);
}

PyObject* take_verdict(PyObject* frame, int line) {
    conditions_flush_hits();
    if (!t_verdict.frame || t_verdict.frame != frame || t_verdict.line != line) Py_RETURN_NONE;
    PyObject* verdict = Py_BuildValue("(OO)", t_verdict.bp, t_verdict.flag ? Py_True : Py_False);
    conditions_forget();
    return verdict;
}

}  // namespace dpdb::engine
