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

enum class Answer { kBdb, kNoStop, kStop };

// One breakpoint of a line, as all_false_in_c reads it: -1 where the engine cannot answer (changed
// since its snapshot but for hits, see follow_hits; no condition answered in C; the condition not
// false), 0 disabled, 1 enabled and its condition false.
int answer_in_c(const FrameView& view, BreakpointSnapshot& snap, PyObject* list, Py_ssize_t i) {
    if (!current(&snap, PyList_GET_ITEM(list, i)) && !follow_hits(snap, list, i)) return -1;
    if (!snap.enabled) return 0;
    return snap.slots && fast_truth_in(view, *snap.slots) == 0 ? 1 : -1;
}

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

// The common hit, with no Python code run and no attribute written: every breakpoint of the line
// unchanged since its snapshot (but for hits: follow_hits), each enabled one with a condition
// answered in C and false there. Its hits are counted in C (effective() counts every enabled
// breakpoint when none stops).
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
    // Plain breakpoints only: bdb decides as ever (each one stops), but while one's ignore count
    // runs, which the engine counts down as bdb would, without a call into Python per hit.
    auto any_ignoring = [&] {
        for (Py_ssize_t i = 0; i < n; ++i)
            if (fields[i].enabled && fields[i].ignoring()) return true;
        return false;
    };
    if (!any_cond && !any_log && !any_ignoring()) return Answer::kBdb;
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

PyObject* take_verdict(PyObject* frame, int line) {
    conditions_flush_hits();
    if (!t_verdict.frame || t_verdict.frame != frame || t_verdict.line != line) Py_RETURN_NONE;
    PyObject* verdict = Py_BuildValue("(OO)", t_verdict.bp, t_verdict.flag ? Py_True : Py_False);
    conditions_forget();
    return verdict;
}

}  // namespace dpdb::engine
