#include "engine/condition_fast.hpp"

#if PY_VERSION_HEX < 0x030B0000
#include <longintrepr.h>  // PyLongObject's digits: 3.11+ has them in Python.h
#endif

#include <cstring>
#include <string>

namespace dpdb::engine {
namespace {

bool g_fast_allowed = true;

using Node = FastCondition::Node;

// The ast node's class name ("Compare", "Name", ...), or "" on failure.
std::string kind_of(PyObject* node) {
    PyObject* name = PyObject_GetAttrString(reinterpret_cast<PyObject*>(Py_TYPE(node)), "__name__");
    const char* text = name ? PyUnicode_AsUTF8(name) : nullptr;
    std::string kind = text ? text : "";
    Py_XDECREF(name);
    return kind;
}

// Builds FastCondition nodes from ast nodes; -1 (an exception may be set) where a node is beyond
// it.
struct Builder {
    FastCondition& out;
    const std::vector<PyObject*>& names;

    int add(Node node) {
        out.nodes.push_back(std::move(node));
        return static_cast<int>(out.nodes.size()) - 1;
    }
    static bool plain_constant(PyObject* value) {
        return value == Py_None || PyBool_Check(value) || PyLong_CheckExact(value) ||
               PyFloat_CheckExact(value) || PyUnicode_CheckExact(value) ||
               PyBytes_CheckExact(value);
    }
    int constant(PyObject* value) {
        if (!plain_constant(value)) return -1;
        Py_INCREF(value);
        return add({FastCondition::kConst, 0, 0, value, {}});
    }
    int name(PyObject* node) {
        PyObject* id = PyObject_GetAttrString(node, "id");
        if (!id) return -1;
        for (std::size_t i = 0; i < names.size(); ++i) {
            if (PyUnicode_Compare(names[i], id) == 0) {
                Py_DECREF(id);
                return add({FastCondition::kSlot, 0, static_cast<int>(i), nullptr, {}});
            }
        }
        PyUnicode_InternInPlace(&id);
        return add({FastCondition::kGlobal, 0, 0, id, {}});
    }
    // -5, -2.5: the compiler folds them into constants too.
    int negative(PyObject* node) {
        PyObject* operand = PyObject_GetAttrString(node, "operand");
        PyObject* value = operand && kind_of(operand) == "Constant"
                              ? PyObject_GetAttrString(operand, "value")
                              : nullptr;
        PyObject* negated = nullptr;
        if (value && (PyLong_CheckExact(value) || PyFloat_CheckExact(value)))
            negated = PyNumber_Negative(value);
        int at = negated ? constant(negated) : -1;
        Py_XDECREF(negated);
        Py_XDECREF(value);
        Py_XDECREF(operand);
        return at;
    }
    bool singleton_or_name(int at) const {
        const Node& node = out.nodes[at];
        return node.kind != FastCondition::kConst || node.object == Py_None ||
               PyBool_Check(node.object);
    }
    static int compare_op(const std::string& kind) {
        static const struct {
            const char* name;
            int op;
        } kOps[] = {{"Eq", Py_EQ},
                    {"NotEq", Py_NE},
                    {"Lt", Py_LT},
                    {"LtE", Py_LE},
                    {"Gt", Py_GT},
                    {"GtE", Py_GE},
                    {"Is", FastCondition::kIs},
                    {"IsNot", FastCondition::kIsNot}};
        for (const auto& known : kOps)
            if (kind == known.name) return known.op;
        return -1;
    }
    // a < b < c as (a < b) and (b < c): the operands have no side effects, so evaluating b twice
    // changes nothing.
    int compare(PyObject* node) {
        PyObject* left = PyObject_GetAttrString(node, "left");
        PyObject* ops = left ? PyObject_GetAttrString(node, "ops") : nullptr;
        PyObject* rights = ops ? PyObject_GetAttrString(node, "comparators") : nullptr;
        int at = -1;
        if (rights && PyList_Check(ops) && PyList_Check(rights) &&
            PyList_GET_SIZE(ops) == PyList_GET_SIZE(rights)) {
            Node all{FastCondition::kAnd, 0, 0, nullptr, {}};
            int previous = operand(left);
            for (Py_ssize_t i = 0; previous >= 0 && i < PyList_GET_SIZE(ops); ++i) {
                int op = compare_op(kind_of(PyList_GET_ITEM(ops, i)));
                int next = op >= 0 ? operand(PyList_GET_ITEM(rights, i)) : -1;
                // The compiler's constants are its own objects (interned strings, shared
                // numbers): only the singletons are the same objects here.
                if (next >= 0 && (op == FastCondition::kIs || op == FastCondition::kIsNot) &&
                    (!singleton_or_name(previous) || !singleton_or_name(next)))
                    next = -1;
                if (next < 0) {
                    previous = -1;
                    break;
                }
                all.kids.push_back(
                    add({FastCondition::kCompare, op, 0, nullptr, {previous, next}}));
                previous = next;
            }
            if (previous >= 0) at = all.kids.size() == 1 ? all.kids[0] : add(std::move(all));
        }
        Py_XDECREF(rights);
        Py_XDECREF(ops);
        Py_XDECREF(left);
        return at;
    }
    // What a comparison compares: a value, not a truth.
    int operand(PyObject* node) {
        const std::string kind = kind_of(node);
        if (kind == "Name") return name(node);
        if (kind == "Constant") {
            PyObject* value = PyObject_GetAttrString(node, "value");
            int at = value ? constant(value) : -1;
            Py_XDECREF(value);
            return at;
        }
        if (kind == "UnaryOp") {
            PyObject* op = PyObject_GetAttrString(node, "op");
            const bool minus = op && kind_of(op) == "USub";
            Py_XDECREF(op);
            return minus ? negative(node) : -1;
        }
        return -1;
    }
    int truth(PyObject* node) {
        const std::string kind = kind_of(node);
        if (kind == "Compare") return compare(node);
        if (kind == "BoolOp" || kind == "UnaryOp") {
            PyObject* op = PyObject_GetAttrString(node, "op");
            const std::string op_kind = op ? kind_of(op) : "";
            Py_XDECREF(op);
            if (op_kind == "USub") return operand(node);
            Node joined{op_kind == "And"  ? FastCondition::kAnd
                        : op_kind == "Or" ? FastCondition::kOr
                                          : FastCondition::kNot,
                        0,
                        0,
                        nullptr,
                        {}};
            if (op_kind == "Not") {
                PyObject* inner = PyObject_GetAttrString(node, "operand");
                int at = inner ? truth(inner) : -1;
                Py_XDECREF(inner);
                if (at < 0) return -1;
                joined.kids.push_back(at);
                return add(std::move(joined));
            }
            if (op_kind != "And" && op_kind != "Or") return -1;
            PyObject* values = PyObject_GetAttrString(node, "values");
            for (Py_ssize_t i = 0; values && PyList_Check(values) && i < PyList_GET_SIZE(values);
                 ++i) {
                int at = truth(PyList_GET_ITEM(values, i));
                if (at < 0) {
                    Py_DECREF(values);
                    return -1;
                }
                joined.kids.push_back(at);
            }
            Py_XDECREF(values);
            return joined.kids.empty() ? -1 : add(std::move(joined));
        }
        return operand(node);
    }
};

bool plain(PyObject* o) {
    return o == Py_None || PyBool_Check(o) || PyLong_CheckExact(o) || PyFloat_CheckExact(o) ||
           PyUnicode_CheckExact(o) || PyBytes_CheckExact(o);
}

// Values of one family compare without warnings (str == bytes warns under -b) or Python code.
int family(PyObject* o) {
    if (o == Py_None) return 0;
    if (PyBool_Check(o) || PyLong_CheckExact(o) || PyFloat_CheckExact(o)) return 1;
    return PyUnicode_CheckExact(o) ? 2 : 3;
}

// `a == b` and `a != b` decided by identity, as CPython's do_richcompare ends for two values whose
// types compare nothing else: one side's type keeps object's own comparison (no __eq__, __ne__ or
// ordering defined anywhere in its MRO, as most classes and None), the other side too, or is
// plain (whose comparison returns NotImplemented for any other type). `task == -1` on a task
// object is then False with no Python code run, as the bytecode's own would be.
bool identity_decides(PyObject* a, PyObject* b) {
    // None compares by identity too (3.12+ gives its type a comparison of its own that does so).
    const auto by_identity = [](PyObject* o) {
        const richcmpfunc compare = Py_TYPE(o)->tp_richcompare;
        return o == Py_None || !compare || compare == PyBaseObject_Type.tp_richcompare;
    };
    const bool a_default = by_identity(a);
    const bool b_default = by_identity(b);
    return (a_default && (b_default || plain(b))) || (b_default && plain(a));
}

// An int that fits a machine word, read without a call where the interpreter lets us.
bool small_int(PyObject* o, long* value) {
    if (!PyLong_CheckExact(o)) return false;
#if PY_VERSION_HEX >= 0x030C0000
    if (!PyUnstable_Long_IsCompact(reinterpret_cast<PyLongObject*>(o))) return false;
    *value = static_cast<long>(PyUnstable_Long_CompactValue(reinterpret_cast<PyLongObject*>(o)));
    return true;
#else
    // One digit or none, the common case, read as 3.12's compact value is; else CPython's own.
    const Py_ssize_t size = Py_SIZE(o);
    if (size >= -1 && size <= 1) {
        const long digit =
            size ? static_cast<long>(reinterpret_cast<PyLongObject*>(o)->ob_digit[0]) : 0;
        *value = size < 0 ? -digit : digit;
        return true;
    }
    int overflow = 0;
    *value = PyLong_AsLongAndOverflow(o, &overflow);
    return !overflow;
#endif
}

int compare_longs(long a, long b, int op) {
    switch (op) {
        case Py_LT:
            return a < b;
        case Py_LE:
            return a <= b;
        case Py_EQ:
            return a == b;
        case Py_NE:
            return a != b;
        case Py_GT:
            return a > b;
        default:
            return a >= b;
    }
}

struct Evaluator {
    const FastCondition& fast;
    PyObject* const* values;
    PyObject* globals;

    // A borrowed value (no Python code runs while it is used), or null: cannot tell.
    PyObject* value(int at) {
        const Node& node = fast.nodes[at];
        switch (node.kind) {
            case FastCondition::kSlot:
                return values[node.slot];
            case FastCondition::kConst:
                return node.object;
            case FastCondition::kGlobal: {
                // As LOAD_GLOBAL reads an exact dict; a builtin, or no such name, is Python's.
                if (!PyDict_CheckExact(globals)) return nullptr;
                PyObject* found = PyDict_GetItemWithError(globals, node.object);
                if (!found) PyErr_Clear();
                return found;
            }
            case FastCondition::kCompare: {
                int t = compare(node);
                return t < 0 ? nullptr : t ? Py_True : Py_False;
            }
            default:
                return nullptr;
        }
    }
    int compare(const Node& node) {
        PyObject* left = value(node.kids[0]);
        PyObject* right = left ? value(node.kids[1]) : nullptr;
        if (!right) return -1;
        if (node.op == FastCondition::kIs) return left == right;
        if (node.op == FastCondition::kIsNot) return left != right;
        long a = 0, b = 0;
        if (small_int(left, &a) && small_int(right, &b)) return compare_longs(a, b, node.op);
        if ((node.op == Py_EQ || node.op == Py_NE) && identity_decides(left, right))
            return (left == right) == (node.op == Py_EQ);
        if (!plain(left) || !plain(right) || family(left) != family(right)) return -1;
        PyObject* result = PyObject_RichCompare(left, right, node.op);
        int t = result ? PyObject_IsTrue(result) : -1;
        Py_XDECREF(result);
        if (t < 0) PyErr_Clear();
        return t;
    }
    int truth(int at) {
        const Node& node = fast.nodes[at];
        switch (node.kind) {
            case FastCondition::kCompare:
                return compare(node);
            case FastCondition::kAnd:
            case FastCondition::kOr: {
                // Python's order and short circuit: an operand after the deciding one is not
                // evaluated (it may be one that would raise).
                const int decides = node.kind == FastCondition::kOr;
                for (int kid : node.kids) {
                    int t = truth(kid);
                    if (t < 0 || t == decides) return t;
                }
                return !decides;
            }
            case FastCondition::kNot: {
                int t = truth(node.kids[0]);
                return t < 0 ? -1 : !t;
            }
            default: {
                PyObject* v = value(at);
                if (!v || !plain(v)) return -1;
                return PyObject_IsTrue(v);  // a plain value's truth cannot fail
            }
        }
    }
};

// The operator seen from the other side: 0 < n is n > 0.
int mirrored(int op) {
    switch (op) {
        case Py_LT:
            return Py_GT;
        case Py_LE:
            return Py_GE;
        case Py_GT:
            return Py_LT;
        case Py_GE:
            return Py_LE;
        default:
            return op;
    }
}

void find_slot_vs_const(FastCondition& fast) {
    const Node& root = fast.nodes.back();
    if (root.kind != FastCondition::kCompare) return;
    const Node& left = fast.nodes[root.kids[0]];
    const Node& right = fast.nodes[root.kids[1]];
    const bool slot_left = left.kind == FastCondition::kSlot;
    const Node& slot = slot_left ? left : right;
    const Node& constant = slot_left ? right : left;
    if (slot.kind != FastCondition::kSlot || constant.kind != FastCondition::kConst) return;
    fast.slot_vs_const = true;
    fast.simple_slot = slot.slot;
    fast.simple_op = slot_left ? root.op : mirrored(root.op);
    fast.simple_const = constant.object;
    fast.simple_is_int = small_int(constant.object, &fast.simple_int);
}

// A condition of constants only is as true at every hit as at the first: its comparisons run no
// Python code (plain values), so answering once changes nothing anyone can see.
void fold_constant(FastCondition& fast) {
    for (const Node& node : fast.nodes)
        if (node.kind == FastCondition::kSlot || node.kind == FastCondition::kGlobal) return;
    Evaluator evaluator{fast, nullptr, nullptr};
    fast.constant_truth = evaluator.truth(static_cast<int>(fast.nodes.size()) - 1);
}

}  // namespace

int fast_truth_slot_vs_const(const FastCondition& fast, PyObject* value) {
    const int op = fast.simple_op;
    if (op == FastCondition::kIs) return value == fast.simple_const;
    if (op == FastCondition::kIsNot) return value != fast.simple_const;
    long a = 0;
    if (fast.simple_is_int && small_int(value, &a)) return compare_longs(a, fast.simple_int, op);
    if ((op == Py_EQ || op == Py_NE) && identity_decides(value, fast.simple_const))
        return (value == fast.simple_const) == (op == Py_EQ);
    return -1;
}

FastCondition::~FastCondition() {
    for (Node& node : nodes) Py_XDECREF(node.object);
}

void fast_conditions_allow(bool on) {
    g_fast_allowed = on;
}

FastCondition* fast_condition(PyObject* cond, const std::vector<PyObject*>& names) {
    if (!g_fast_allowed) return nullptr;
    const char* text = PyUnicode_AsUTF8(cond);
    PyObject* ast = text ? PyImport_ImportModule("ast") : nullptr;
    while (text && (*text == ' ' || *text == '\t')) ++text;
    PyObject* tree =
        ast ? PyObject_CallMethod(ast, "parse", "sss", text, "<string>", "eval") : nullptr;
    PyObject* body = tree ? PyObject_GetAttrString(tree, "body") : nullptr;
    auto* fast = new FastCondition;
    Builder builder{*fast, names};
    if (!body || builder.truth(body) < 0) {
        delete fast;
        fast = nullptr;
    } else {
        find_slot_vs_const(*fast);
        fold_constant(*fast);
    }
    Py_XDECREF(body);
    Py_XDECREF(tree);
    Py_XDECREF(ast);
    PyErr_Clear();
    return fast;
}

int fast_truth(const FastCondition& fast, PyObject* const* values, PyObject* globals) {
    if (fast.constant_truth >= 0) return fast.constant_truth;
    Evaluator evaluator{fast, values, globals};
    return evaluator.truth(static_cast<int>(fast.nodes.size()) - 1);
}

}  // namespace dpdb::engine
