#include "engine/breakpoint_snapshot.hpp"

#include <vector>

#include "engine/condition.hpp"
#include "engine/engine.hpp"

namespace dpdb::engine {
namespace {

// What a snapshot compares by identity (3.14+), in BreakpointSnapshot::seen's order.
PyObject* g_seen_names[BreakpointSnapshot::kSeen];

}  // namespace

BreakpointNames g_names{};
PyObject* g_zero = nullptr;

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

namespace {

// Py_NewRef and Py_XNewRef, which 3.9 lacks.
PyObject* new_ref(PyObject* o) {
    Py_INCREF(o);
    return o;
}
PyObject* xnew_ref(PyObject* o) {
    Py_XINCREF(o);
    return o;
}

// Snapshots holding hits counted in C (BreakpointSnapshot::pending).
std::vector<BreakpointSnapshot*> g_dirty;

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

}  // namespace

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

void note_pending(BreakpointSnapshot& snap) {
    g_dirty.push_back(&snap);
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

void conditions_flush_hits() {
    std::vector<BreakpointSnapshot*> dirty;
    dirty.swap(g_dirty);
    for (BreakpointSnapshot* snap : dirty) write_pending(*snap);
}

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

void Fields::read(PyObject* breakpoint, BreakpointSnapshot* snapshot) {
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

void Fields::keep(BreakpointSnapshot* snapshot) {
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

void Fields::learn_compiled(PyObject* code, const ConditionSlots* slots) {
    compiled = code;
    if (current(snap, bp)) {
        snap->compiled = code;
        snap->slots = snap->by_function || !snap->has_cond ? nullptr : slots;
    }
}

Fields::~Fields() {
    Py_XDECREF(cond);
    Py_XDECREF(dict);
    Py_XDECREF(bp);
}

bool Fields::add(PyObject* name, long delta) {
    // A snapshot holds hits and nothing of ignore: it stays current through either change.
    const bool is_hits = name == g_names.hits;
    const bool known = kVersionTags && (is_hits || name == g_names.ignore) && current(snap, bp);
    PyObject* now = known && is_hits ? new_ref(snap->hits) : attribute(bp, dict, name);
    PyObject* step = now ? PyLong_FromLong(delta) : nullptr;
    PyObject* next = step ? PyNumber_Add(now, step) : nullptr;
    int rc = !next  ? -1
             : dict ? PyDict_SetItem(dict, name, next)
                    : PyObject_SetAttr(bp, name, next);
    if (known && rc == 0) {
        if (is_hits) Py_SETREF(snap->hits, new_ref(next));
        snap->version = dict_version(dict);
    } else if (kVersionTags && snap && snap->bp == bp) {
        snap->valid = false;
    }
    Py_XDECREF(now);
    Py_XDECREF(step);
    Py_XDECREF(next);
    return rc == 0;
}

bool Fields::ignoring() {
    PyObject* now = attribute(bp, dict, g_names.ignore);
    const int positive = now ? PyObject_RichCompareBool(now, g_zero, Py_GT) : -1;
    Py_XDECREF(now);
    if (positive < 0) PyErr_Clear();
    return positive > 0;
}

bool Fields::ignored() {
    return ignoring() && add(g_names.ignore, -1);
}

}  // namespace dpdb::engine
