#include "engine/condition.hpp"

#include <cstring>
#include <memory>
#include <string>

#include "engine/engine.hpp"
#include "engine/frame_access.hpp"

namespace dpdb::engine {
namespace {

bool g_allowed = true;
PyObject* g_one = nullptr;
// cond string -> its compiled code, or None where the engine leaves the condition to bdb.
PyObject* g_compiled = nullptr;

struct Names {
    PyObject* bplist;
    PyObject* enabled;
    PyObject* funcname;
    PyObject* cond;
    PyObject* hits;
};
Names g_names{};

bool ensure_names() {
    if (g_names.hits) return true;
    g_compiled = PyDict_New();
    g_one = PyLong_FromLong(1);
    g_names = {PyUnicode_InternFromString("bplist"), PyUnicode_InternFromString("enabled"),
               PyUnicode_InternFromString("funcname"), PyUnicode_InternFromString("cond"),
               PyUnicode_InternFromString("hits")};
    return g_compiled && g_one && g_names.bplist && g_names.enabled && g_names.funcname &&
           g_names.cond && g_names.hits;
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

// bdb's eval(cond, ...) of a string: leading blanks stripped, no compiler flags inherited (bdb
// has no future imports). Borrowed code object, or None; null with an exception set.
PyObject* compiled_condition(PyObject* cond) {
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
    constexpr std::size_t kMaxArgs = 16;
    PyObject* values[kMaxArgs];
    const std::size_t n = found.slots.size();
    bool all_bound = n <= kMaxArgs;
    PyObject** fast = view.localsplus;
    for (std::size_t i = 0; i < n; ++i) {
        const ConditionSlots::Slot& slot = found.slots[i];
        PyObject* value = fast[slot.index];
        if (value && slot.cell && PyCell_Check(value)) value = PyCell_GET(value);
        if (i < kMaxArgs) values[i] = value;
        all_bound = all_bound && value;
    }
    if (all_bound) {
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
        PyObject* value = fast[slot.index];
        if (value && slot.cell && PyCell_Check(value)) value = PyCell_GET(value);
        if (value && PyDict_SetItem(locals, slot.name, value) < 0) Py_CLEAR(locals);
    }
    PyObject* value = locals ? PyEval_EvalCode(compiled, globals, locals) : nullptr;
    Py_XDECREF(locals);
    return value;
}

// 1 when `cond` is false in the frame, 0 when true, raising, or beyond the engine.
int is_false(const FrameView& view, PyObject* code, CodeInfo* info, PyObject* cond) {
    if (!PyUnicode_Check(cond)) return 0;
    PyObject* compiled = compiled_condition(cond);
    if (!compiled || compiled == Py_None) return 0;
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
    return truth == 0 ? 1 : 0;
}

// bdb.Breakpoint.bplist[file of code, line]: a list, borrowed (kept by the code's cache for
// this generation of breakpoints: a key that comes or goes starts a new one), or null.
PyObject* breakpoints_at(PyObject* code, CodeInfo* info, int line) {
    ConditionCache& cache = *info->conditions;
    if (cache.generation != state().generation) {
        for (auto& [at, list] : cache.lines) Py_DECREF(list);
        cache.lines.clear();
        cache.generation = state().generation;
    }
    for (auto& [at, list] : cache.lines)
        if (at == line) return list;
    PyObject* file = canonic_filename(reinterpret_cast<PyCodeObject*>(code)->co_filename);
    if (!file) return nullptr;
    PyObject* bplist = PyObject_GetAttr(state().breakpoint_class, g_names.bplist);
    PyObject* key = bplist ? Py_BuildValue("(Oi)", file, line) : nullptr;
    PyObject* found = key && PyDict_Check(bplist) ? PyDict_GetItemWithError(bplist, key) : nullptr;
    if (found && PyList_Check(found)) {
        Py_INCREF(found);
        cache.lines.emplace_back(line, found);
    } else {
        found = nullptr;
    }
    Py_XDECREF(key);
    Py_XDECREF(bplist);
    return found;
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
    return dict;
}

// 1: bdb would skip `bp` without a word (disabled); 0: bdb would count a hit and evaluate its
// condition, which is false; -1: bdb must decide.
int false_or_disabled(const FrameView& view, PyObject* code, CodeInfo* info, PyObject* bp,
                      PyObject* dict) {
    PyObject* enabled = attribute(bp, dict, g_names.enabled);
    int on = enabled ? PyObject_IsTrue(enabled) : -1;
    Py_XDECREF(enabled);
    if (on <= 0) return on == 0 ? 1 : -1;
    PyObject* funcname = attribute(bp, dict, g_names.funcname);
    bool by_function = !funcname || funcname != Py_None;
    Py_XDECREF(funcname);
    if (by_function) return -1;
    PyObject* cond = attribute(bp, dict, g_names.cond);
    int has_cond = cond ? PyObject_IsTrue(cond) : -1;
    int answer = has_cond > 0 && is_false(view, code, info, cond) ? 0 : -1;
    Py_XDECREF(cond);
    return answer;
}

bool count_hit(PyObject* bp) {
    PyObject* dict = dict_of(bp);
    PyObject* hits = attribute(bp, dict, g_names.hits);
    PyObject* more = hits ? PyNumber_Add(hits, g_one) : nullptr;
    int rc = !more  ? -1
             : dict ? PyDict_SetItem(dict, g_names.hits, more)
                    : PyObject_SetAttr(bp, g_names.hits, more);
    Py_XDECREF(dict);
    Py_XDECREF(hits);
    Py_XDECREF(more);
    return rc == 0;
}

}  // namespace

ConditionCache::~ConditionCache() {
    for (ConditionSlots& entry : entries) {
        Py_XDECREF(entry.wrapper);
        Py_XDECREF(entry.function);
    }
    for (auto& [line, list] : lines) Py_DECREF(list);
}

void conditions_allow(bool on) {
    g_allowed = on;
}

bool conditions_false(PyFrameObject* frame, PyObject* code, int line) {
    if (!g_allowed) return false;
#if PY_VERSION_HEX >= 0x030B0000
    PyObject* globals = PyFrame_GetGlobals(frame);
    Py_DECREF(globals);  // the frame holds it
#else
    PyObject* globals = frame->f_globals;
#endif
    return conditions_false(FrameView{frame_localsplus(frame), globals, frame}, code, line);
}

#if PY_VERSION_HEX >= 0x030C0000
bool conditions_false_running(PyObject* code, int line) {
    if (!g_allowed || !(reinterpret_cast<PyCodeObject*>(code)->co_flags & CO_OPTIMIZED))
        return false;
    PyThreadState* ts = PyThreadState_Get();
#if PY_VERSION_HEX >= 0x030D0000
    auto* running = reinterpret_cast<InterpreterFrameHead*>(ts->current_frame);
#else
    auto* running = reinterpret_cast<InterpreterFrameHead*>(ts->cframe->current_frame);
#endif
    if (!running || running->pointers[0] != code) return false;
    auto* globals = static_cast<PyObject*>(running->pointers[3]);
    return conditions_false(FrameView{running->localsplus, globals, nullptr}, code, line);
}
#endif

bool conditions_false(const FrameView& view, PyObject* code, int line) {
    if (!g_allowed) return false;
    CodeInfo* info = ensure_names() ? code_info(code) : nullptr;
    if (info && !info->conditions) info->conditions = std::make_unique<ConditionCache>();
    PyObject* breakpoints = info ? breakpoints_at(code, info, line) : nullptr;
    bool answered = breakpoints != nullptr;
    // A condition may add or remove breakpoints: the list is held, and so is each breakpoint
    // while it is looked at.
    Py_XINCREF(breakpoints);
    constexpr Py_ssize_t kMaxCounted = 8;
    PyObject* counted[kMaxCounted];
    Py_ssize_t ncounted = 0;
    for (Py_ssize_t i = 0; answered && i < PyList_GET_SIZE(breakpoints); ++i) {
        PyObject* bp = PyList_GET_ITEM(breakpoints, i);
        Py_INCREF(bp);
        PyObject* dict = dict_of(bp);
        int verdict = false_or_disabled(view, code, info, bp, dict);
        Py_XDECREF(dict);
        answered = verdict >= 0 && !(verdict == 0 && ncounted == kMaxCounted);
        if (answered && verdict == 0) {
            counted[ncounted++] = bp;
        } else {
            Py_DECREF(bp);
        }
    }
    for (Py_ssize_t i = 0; i < ncounted; ++i) {
        answered = answered && count_hit(counted[i]);
        Py_DECREF(counted[i]);
    }
    Py_XDECREF(breakpoints);
    if (PyErr_Occurred()) PyErr_Clear();
    if (answered) ++state().conditions_false;
    return answered;
}

}  // namespace dpdb::engine
