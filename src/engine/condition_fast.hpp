// Breakpoint conditions simple enough to be answered in C, without calling Python: comparisons
// (`==`, `!=`, `<`, `<=`, `>`, `>=`, `is`, `is not`, chained) of the frame's variables, globals
// and constants, joined by `and`, `or`, `not`. The common conditions ("n < 0",
// "rank == 3 and step > 12000", "request_id == 'a81f'", "x is None") cost a few loads and a
// comparison per hit instead of a call of the `lambda <names>: (cond)` condition_eval.cpp makes.
//
// Only values whose comparisons and truth run no Python code are compared here (None, bool, int,
// float, str, bytes, exact types; `is` compares anything; `==` and `!=` also an object whose type
// compares only by identity, as most classes do, with one of those or another such); the result
// is then what the bytecode
// would compute, and nothing else can tell. Any other value, a global the module does not hold
// (a builtin, or a NameError to raise), or a comparison that fails (`1 < "a"`) leaves the hit to
// the Python call, which computes it, or raises, as eval would.
#pragma once

#include <Python.h>

#include <vector>

namespace dpdb::engine {

struct FastCondition {
    enum Kind : unsigned char { kSlot, kGlobal, kConst, kCompare, kAnd, kOr, kNot };
    static constexpr int kIs = 100, kIsNot = 101;  // beside Py_LT ... Py_GE
    struct Node {
        Kind kind;
        int op = 0;                  // kCompare: Py_LT ... Py_GE, kIs, kIsNot
        int slot = 0;                // kSlot: index into the values given to fast_truth
        PyObject* object = nullptr;  // kGlobal: the name; kConst: the value (both owned)
        std::vector<int> kids;       // kCompare: left, right; kAnd, kOr, kNot: operands
    };
    std::vector<Node> nodes;  // the root last
    // The commonest shape, `variable OP constant` (`n < 0`, `rank == 3`, `x is None`): the
    // variable's index, the constant (borrowed from its node) and the operator (as seen from the
    // variable), answered without walking the nodes; an int constant also as a machine word.
    bool slot_vs_const = false;
    int simple_slot = 0;
    int simple_op = 0;
    PyObject* simple_const = nullptr;
    bool simple_is_int = false;
    long simple_int = 0;
    // The truth of a condition that reads no variable (`0 > 1`, `False`), worked out once: 1 or
    // 0, or -1 where it names one, or where C cannot tell.
    int constant_truth = -1;
    FastCondition() = default;
    FastCondition(const FastCondition&) = delete;
    FastCondition& operator=(const FastCondition&) = delete;
    ~FastCondition();
};

// DPDB_ENGINE=condpy turns it off (every condition is called as Python).
void fast_conditions_allow(bool on);

// `cond` (the condition's text, which compiles) made a FastCondition whose variable `names[i]`
// is the i-th value given to fast_truth (any other name is a global). Null, never with an
// exception set, when the condition is beyond it or it is off.
FastCondition* fast_condition(PyObject* cond, const std::vector<PyObject*>& names);

// `variable OP constant`'s truth for the variable's value: 1 or 0, or -1 when it cannot tell
// without the nodes.
int fast_truth_slot_vs_const(const FastCondition& fast, PyObject* value);

// The condition's truth with these values and globals: 1 or 0, or -1 when it cannot tell (the
// caller evaluates the condition in Python). Never sets an exception.
int fast_truth(const FastCondition& fast, PyObject* const* values, PyObject* globals);

}  // namespace dpdb::engine
