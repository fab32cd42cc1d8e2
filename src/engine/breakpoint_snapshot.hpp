// What the engine reads and writes of one bdb.Breakpoint at a line with conditions: the fields
// bdb.effective() reads, kept as a snapshot while nothing changes the breakpoint's dict, and the
// hits counted in C until bdb or pdb looks (condition.hpp says who asks, and why).
#pragma once

#include <Python.h>

#include <cstdint>

namespace dpdb::engine {

struct ConditionSlots;  // condition.hpp

// What bdb.effective() reads of one bdb.Breakpoint, as of one version of its instance dict: read
// again whenever anything changed the dict (`condition`, `ignore`, `enable`, a hit counted by bdb;
// 3.14+: whenever what it read there is no longer the same object).
struct BreakpointSnapshot {
    PyObject* bp = nullptr;    // strong
    PyObject* dict = nullptr;  // strong
    std::uint64_t version = 0;
    bool valid = false;
    bool enabled = false;
    bool by_function = true;
    bool logpoint = false;
    bool has_cond = false;
    PyObject* cond = nullptr;      // strong
    PyObject* compiled = nullptr;  // borrowed from the engine's compiled conditions, or null
    PyObject* hits = nullptr;      // strong
    // Where the condition's variables are (null until known, and where the guard cannot answer
    // for the breakpoint: one by function name, or one without a condition): with
    // a condition answered in C (condition_fast.hpp) a false hit is counted in `pending`, not
    // written to `hits`, until bdb or pdb looks (conditions_flush_hits) or this is dropped.
    const ConditionSlots* slots = nullptr;
    std::uint64_t pending = 0;
    // 3.14+: enabled, funcname, cond and dpdb_log as read (strong, null where missing): the
    // snapshot holds while the dict holds these same objects.
    static constexpr int kSeen = 4;
    PyObject* seen[kSeen] = {};
    BreakpointSnapshot() = default;
    BreakpointSnapshot(const BreakpointSnapshot&) = delete;
    BreakpointSnapshot& operator=(const BreakpointSnapshot&) = delete;
    ~BreakpointSnapshot() { clear(); }
    void clear();
};

// bdb.Breakpoint's attribute names (and bplist, its class's), interned by ensure_names.
struct BreakpointNames {
    PyObject* bplist;
    PyObject* enabled;
    PyObject* funcname;
    PyObject* cond;
    PyObject* hits;
    PyObject* ignore;
    PyObject* dpdb_log;
};
extern BreakpointNames g_names;
extern PyObject* g_zero;
// Readies g_names and g_zero; false with an exception set.
bool ensure_names();

// Whether the breakpoint's dict holds the objects effective() reads (enabled, funcname, cond,
// dpdb_log) as snapped.
bool same_objects(const BreakpointSnapshot* snap);

#if PY_VERSION_HEX < 0x030E0000
// The version tag CPython gives a dict at every change (PEP 509; deprecated in 3.12, kept there
// and in 3.13): it covers every field, hits included. 3.13 changes no tag where an instance's
// attributes live in its inline values, even once a dict is made for them (it shares them), so
// there a breakpoint is given a dict of its own (dict_of).
constexpr bool kVersionTags = true;
inline std::uint64_t dict_version(PyObject* dict) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    return reinterpret_cast<PyDictObject*>(dict)->ma_version_tag;
#pragma GCC diagnostic pop
}
inline bool unchanged(const BreakpointSnapshot* snap) {
    return dict_version(snap->dict) == snap->version;
}
#else
// 3.14 has no version tag: a snapshot is current while the objects effective() reads (enabled,
// funcname, cond, dpdb_log) are the same objects; hits are read at every change. Untested here.
constexpr bool kVersionTags = false;
inline std::uint64_t dict_version(PyObject*) {
    return 0;
}
inline bool unchanged(const BreakpointSnapshot* snap) {
    return same_objects(snap);
}
#endif

// Whether `snap` is of `bp` and nothing changed the breakpoint since it was taken. Inline, as
// count_hit: both run at every hit a guard answers.
inline bool current(const BreakpointSnapshot* snap, PyObject* bp) {
    return snap && snap->valid && snap->bp == bp && unchanged(snap);
}
// Whether `snap`, not current, is so only because hits were written to the breakpoint (by another
// code object's snapshot of it, where its line runs in two): then it is made current again.
bool follow_hits(BreakpointSnapshot& snap, PyObject* list, Py_ssize_t i);
// Keeps `snap` among those whose hits conditions_flush_hits writes.
void note_pending(BreakpointSnapshot& snap);
// One hit of the snapshot's breakpoint, counted in C (BreakpointSnapshot::pending).
inline void count_hit(BreakpointSnapshot& snap) {
    if (snap.pending++ == 0) note_pending(snap);
}
// The hits counted in C for this snapshot written to its breakpoint (all of them:
// condition.hpp's conditions_flush_hits).
void flush(BreakpointSnapshot& snap);

// The attributes bdb.effective() reads of one breakpoint (new references, null if missing), from
// its snapshot while nothing changed the breakpoint since.
struct Fields {
    PyObject* bp = nullptr;
    PyObject* dict = nullptr;
    PyObject* cond = nullptr;
    PyObject* compiled = nullptr;  // the condition's code, once known (borrowed)
    BreakpointSnapshot* snap = nullptr;
    bool enabled = false;
    bool has_cond = false;
    bool by_function = true;
    bool logpoint = false;  // python/dpdb/_logpoints.py's: a message when due, never a stop

    Fields() = default;
    // Reads `breakpoint` (from `snapshot` while it is current, else from the breakpoint, and then
    // keeps what it read there).
    void read(PyObject* breakpoint, BreakpointSnapshot* snapshot);
    // The condition's code, once bdb's cond is known to be one the engine evaluates.
    void learn_compiled(PyObject* code, const ConditionSlots* slots);
    ~Fields();
    Fields(const Fields&) = delete;
    Fields& operator=(const Fields&) = delete;

    // bp.<name> += delta; false with an exception set on failure. The hits of an unchanged
    // breakpoint come from its snapshot, which the change then follows.
    bool add(PyObject* name, long delta);
    // bdb's `b.ignore > 0`.
    bool ignoring();
    // bdb's `b.ignore > 0`, then `b.ignore -= 1`: whether this hit is ignored.
    bool ignored();

  private:
    // Read after the fields, with no Python code run between: the dict's version covers them.
    void keep(BreakpointSnapshot* snapshot);
};

}  // namespace dpdb::engine
