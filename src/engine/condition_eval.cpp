#include "engine/condition_eval.hpp"

#include <cstring>
#include <memory>
#include <string>

#include "engine/condition.hpp"
#include "engine/condition_fast.hpp"
#include "engine/engine.hpp"

namespace dpdb::engine {
namespace {

// cond string -> its compiled code, or None where the engine leaves the condition to bdb.
PyObject* g_compiled = nullptr;

// The first exception this thread's conditions raised that is no Exception (raise_escaping).
struct Escaping {
    PyObject* type = nullptr;  // strong, as PyErr_Fetch gives them
    PyObject* value = nullptr;
    PyObject* traceback = nullptr;
};
thread_local Escaping t_escaping;

// bdb's bare except: a condition that raised stops its breakpoint, the exception gone. One that
// is no Exception (a signal handler's sys.exit, KeyboardInterrupt) is kept for the program.
void keep_escaping_or_clear() {
    if (t_escaping.type || PyErr_ExceptionMatches(PyExc_Exception)) {
        PyErr_Clear();
        return;
    }
    PyErr_Fetch(&t_escaping.type, &t_escaping.value, &t_escaping.traceback);
}

// Calls that read the evaluating frame's own namespace would see the small mapping instead of
// f_locals.
bool names_own_namespace(PyObject* compiled) {
    static const char* const kNamespaceReaders[] = {"locals", "vars", "dir", "eval", "exec"};
    PyObject* names = reinterpret_cast<PyCodeObject*>(compiled)->co_names;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(names); ++i) {
        const char* name = PyUnicode_AsUTF8(PyTuple_GET_ITEM(names, i));
        if (!name) return true;
        for (const char* reader : kNamespaceReaders)
            if (std::strcmp(name, reader) == 0) return true;
    }
    return false;
}

}  // namespace

PyObject* compiled_condition(PyObject* cond) {
    if (!g_compiled && !(g_compiled = PyDict_New())) return nullptr;
    PyObject* known = PyDict_GetItemWithError(g_compiled, cond);
    if (known || PyErr_Occurred()) return known;
    const char* text = PyUnicode_AsUTF8(cond);
    if (!text) return nullptr;
    while (*text == ' ' || *text == '\t') ++text;
    PyObject* compiled = nullptr;
    if (!std::strstr(text, ":=")) {
        compiled = Py_CompileString(text, "<string>", Py_eval_input);
        if (!compiled) PyErr_Clear();  // bdb raises the same error, and stops
    }
    if (compiled && names_own_namespace(compiled)) Py_CLEAR(compiled);
    if (!compiled) {
        Py_INCREF(Py_None);
        compiled = Py_None;
    }
    int rc = PyDict_SetItem(g_compiled, cond, compiled);
    Py_DECREF(compiled);
    return rc < 0 ? nullptr : compiled;
}

namespace {

PyObject* new_bool(int truth) {
    PyObject* value = truth ? Py_True : Py_False;
    Py_INCREF(value);
    return value;
}

bool same_name(PyObject* a, PyObject* b) {
    return a == b || PyUnicode_Compare(a, b) == 0;
}

#if PY_VERSION_HEX >= 0x030B0000
// CPython's private kinds of co_localspluskinds (internal/pycore_code.h, 3.11-3.13).
constexpr unsigned char kFastHidden = 0x10;
constexpr unsigned char kFastCell = 0x40;
constexpr unsigned char kFastFree = 0x80;

// The slot f_locals reads `name` from: -1 when the code has no such variable, -2 when f_locals
// leaves it out (a comprehension's variable inlined into the frame, 3.12+).
int slot_of(PyCodeObject* co, PyObject* name, bool* cell) {
    PyObject* names = co->co_localsplusnames;
    const char* kinds = PyBytes_AS_STRING(co->co_localspluskinds);
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(names); ++i) {
        if (!same_name(PyTuple_GET_ITEM(names, i), name)) continue;
        auto kind = static_cast<unsigned char>(kinds[i]);
        if (kind & kFastHidden) return -2;
        *cell = (kind & (kFastCell | kFastFree)) != 0;
        return static_cast<int>(i);
    }
    return -1;
}
#else
int find_in(PyObject* names, PyObject* name) {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(names); ++i)
        if (same_name(PyTuple_GET_ITEM(names, i), name)) return static_cast<int>(i);
    return -1;
}

// As PyFrame_FastToLocals reads them: a cell variable that is also an argument lives in its cell
// (the argument's own slot is cleared), free variables after the cells.
int slot_of(PyCodeObject* co, PyObject* name, bool* cell) {
    const int ncells = static_cast<int>(PyTuple_GET_SIZE(co->co_cellvars));
    *cell = true;
    int i = find_in(co->co_cellvars, name);
    if (i >= 0) return co->co_nlocals + i;
    i = find_in(co->co_freevars, name);
    if (i >= 0) return co->co_nlocals + ncells + i;
    *cell = false;
    return find_in(co->co_varnames, name);
}
#endif

ConditionSlots& slots_for(PyObject* code, CodeInfo* info, PyObject* compiled) {
    if (!info->conditions) info->conditions = std::make_unique<ConditionCache>();
    for (ConditionSlots& known : info->conditions->entries)
        if (known.compiled == compiled) return known;
    ConditionSlots& made = info->conditions->entries.emplace_back();
    made.compiled = compiled;
    made.usable = true;
    auto* co = reinterpret_cast<PyCodeObject*>(code);
    PyObject* names = reinterpret_cast<PyCodeObject*>(compiled)->co_names;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(names) && made.usable; ++i) {
        PyObject* name = PyTuple_GET_ITEM(names, i);
        bool cell = false;
        int index = slot_of(co, name, &cell);
        if (index == -2) made.usable = false;
        if (index >= 0) made.slots.push_back({name, index, cell});
    }
    return made;
}

// A scope of the condition's own (a lambda, a comprehension, which 3.12 inlines as variables of
// the condition's code) would see the wrapper's arguments where eval's sees the globals.
bool has_own_scopes(PyObject* compiled) {
    auto* co = reinterpret_cast<PyCodeObject*>(compiled);
#if PY_VERSION_HEX >= 0x030B0000
    if (co->co_nlocalsplus > 0) return true;
#else
    if (co->co_nlocals > 0) return true;
#endif
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(co->co_consts); ++i)
        if (PyCode_Check(PyTuple_GET_ITEM(co->co_consts, i))) return true;
    return false;
}

// The code of `lambda <slot names>: (cond)`, or null (never an exception) where it would not
// behave as eval(cond) with those names in the locals.
PyObject* make_wrapper(const ConditionSlots& found, PyObject* cond) {
    if (has_own_scopes(found.compiled)) return nullptr;
    std::string source = "lambda ";
    for (std::size_t i = 0; i < found.slots.size(); ++i) {
        const char* name = PyUnicode_AsUTF8(found.slots[i].name);
        if (!name) return nullptr;
        source += (i ? ", " : "") + std::string(name);
    }
    const char* text = PyUnicode_AsUTF8(cond);
    if (!text) return nullptr;
    while (*text == ' ' || *text == '\t') ++text;
    source += ": (\n" + std::string(text) + "\n)";
    PyObject* outer = Py_CompileString(source.c_str(), "<string>", Py_eval_input);
    PyObject* wrapper = nullptr;
    PyObject* consts = outer ? reinterpret_cast<PyCodeObject*>(outer)->co_consts : nullptr;
    for (Py_ssize_t i = 0; consts && i < PyTuple_GET_SIZE(consts); ++i) {
        PyObject* item = PyTuple_GET_ITEM(consts, i);
        if (PyCode_Check(item)) wrapper = item;
    }
    const int kinds = CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR;
    if (wrapper && !(reinterpret_cast<PyCodeObject*>(wrapper)->co_flags & kinds)) {
        Py_INCREF(wrapper);
    } else {
        wrapper = nullptr;
    }
    Py_XDECREF(outer);
    PyErr_Clear();
    return wrapper;
}

// The wrapper made a function of `globals`, or null (never an exception) when there is none.
PyObject* function_for(ConditionSlots& found, PyObject* cond, PyObject* globals) {
    if (!found.wrapper_tried) {
        found.wrapper_tried = true;
        found.wrapper = make_wrapper(found, cond);
    }
    if (!found.wrapper) return nullptr;
    if (found.function && PyFunction_GET_GLOBALS(found.function) == globals) return found.function;
    Py_CLEAR(found.function);
    found.function = PyFunction_New(found.wrapper, globals);
    if (!found.function) PyErr_Clear();
    return found.function;
}

constexpr std::size_t kMaxArgs = 16;

// The values of the condition's variables in the frame, into values[0..slots): false when one is
// unbound (or there are too many).
bool gather(const FrameView& view, const ConditionSlots& found, PyObject** values) {
    const std::size_t n = found.slots.size();
    if (n > kMaxArgs) return false;
    PyObject** fast = view.localsplus;
    for (std::size_t i = 0; i < n; ++i) {
        const ConditionSlots::Slot& slot = found.slots[i];
        PyObject* value = fast[slot.index];
        if (value && slot.cell && PyCell_Check(value)) value = PyCell_GET(value);
        if (!value) return false;
        values[i] = value;
    }
    return true;
}

// The condition's value in the frame: new reference, or null with an exception set, or without
// one when the engine cannot tell.
PyObject* evaluate(const FrameView& view, PyObject* code, CodeInfo* info, PyObject* cond,
                   PyObject* compiled) {
    PyObject* globals = view.globals;
    if (!(reinterpret_cast<PyCodeObject*>(code)->co_flags & CO_OPTIMIZED)) {
        // Module and class bodies: f_locals is their namespace itself.
        if (!view.frame) return nullptr;
#if PY_VERSION_HEX >= 0x030B0000
        PyObject* locals = PyFrame_GetLocals(view.frame);
#else
        PyObject* locals = view.frame->f_locals;
        Py_XINCREF(locals);
#endif
        PyObject* value = locals ? PyEval_EvalCode(compiled, globals, locals) : nullptr;
        Py_XDECREF(locals);
        return value;
    }
    ConditionSlots& found = slots_for(code, info, compiled);
    if (!found.usable) return nullptr;
    PyObject* values[kMaxArgs];
    const std::size_t n = found.slots.size();
    const bool all_bound = gather(view, found, values);
    if (all_bound) {
        if (!found.fast_tried) {
            found.fast_tried = true;
            std::vector<PyObject*> names;
            for (const ConditionSlots::Slot& slot : found.slots) names.push_back(slot.name);
            found.fast = fast_condition(cond, names);
        }
        if (found.fast) {
            const int truth = fast_truth(*found.fast, values, globals);
            if (truth >= 0) return new_bool(truth);
        }
        if (PyObject* function = function_for(found, cond, globals)) {
            // Held: while the condition runs, another thread may remake the slot's function.
            Py_INCREF(function);
            PyObject* value = PyObject_Vectorcall(function, values, n, nullptr);
            Py_DECREF(function);
            return value;
        }
    }
    // What f_locals holds of the names: an unbound variable is left out, as f_locals leaves it.
    PyObject* locals = PyDict_New();
    for (std::size_t i = 0; locals && i < n; ++i) {
        const ConditionSlots::Slot& slot = found.slots[i];
        PyObject* value = view.localsplus[slot.index];
        if (value && slot.cell && PyCell_Check(value)) value = PyCell_GET(value);
        if (value && PyDict_SetItem(locals, slot.name, value) < 0) Py_CLEAR(locals);
    }
    PyObject* value = locals ? PyEval_EvalCode(compiled, globals, locals) : nullptr;
    Py_XDECREF(locals);
    return value;
}

}  // namespace

PyObject* evaluable(const FrameView& view, PyObject* code, CodeInfo* info, PyObject* cond,
                    PyObject* compiled) {
    if (!compiled) {
        if (!PyUnicode_Check(cond)) return nullptr;
        compiled = compiled_condition(cond);
        if (!compiled || compiled == Py_None) return nullptr;
    }
    if (!(reinterpret_cast<PyCodeObject*>(code)->co_flags & CO_OPTIMIZED))
        return view.frame ? compiled : nullptr;
    return slots_for(code, info, compiled).usable ? compiled : nullptr;
}

const ConditionSlots* slots_known(PyObject* code, CodeInfo* info, PyObject* compiled) {
    if (!(reinterpret_cast<PyCodeObject*>(code)->co_flags & CO_OPTIMIZED)) return nullptr;
    const ConditionSlots& found = slots_for(code, info, compiled);
    return found.usable ? &found : nullptr;
}

int fast_truth_in(const FrameView& view, const ConditionSlots& found) {
    if (!found.fast) return -1;
    if (found.fast->slot_vs_const) {
        const ConditionSlots::Slot& slot = found.slots[found.fast->simple_slot];
        PyObject* value = view.localsplus[slot.index];
        if (value && slot.cell && PyCell_Check(value)) value = PyCell_GET(value);
        const int truth = value ? fast_truth_slot_vs_const(*found.fast, value) : -1;
        if (truth >= 0) return truth;
    }
    PyObject* values[kMaxArgs];
    if (!gather(view, found, values)) return -1;
    return fast_truth(*found.fast, values, view.globals);
}

int truth_of(const FrameView& view, PyObject* code, CodeInfo* info, PyObject* cond,
             PyObject* compiled) {
#if PY_VERSION_HEX < 0x030C0000
    // As inside bdb's trace function: what the condition calls is not traced (the patched code's
    // check runs outside any trace function; 3.12's callbacks run with tracing already counted).
    PyThreadState* ts = PyThreadState_Get();
    ++ts->tracing;
#endif
    PyObject* value = evaluate(view, code, info, cond, compiled);
#if PY_VERSION_HEX < 0x030C0000
    --ts->tracing;
#endif
    int truth = value ? PyObject_IsTrue(value) : -1;
    Py_XDECREF(value);
    if (truth < 0) keep_escaping_or_clear();
    return truth;
}

bool raise_escaping() {
    Escaping& kept = t_escaping;
    if (!kept.type) return false;
    PyErr_Restore(kept.type, kept.value, kept.traceback);
    kept = {};
    return true;
}

}  // namespace dpdb::engine
