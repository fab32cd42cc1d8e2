// CPython 3.12: scan mode.
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
#include <Python.h>

#if PY_VERSION_HEX >= 0x030C0000

#include <algorithm>
#include <cstring>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "engine/engine.hpp"
#include "engine/fast_copy.hpp"
#include "engine/monitoring.hpp"

namespace dpdb::engine {
namespace {

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

}  // namespace

int apply_scan_codes() {
    std::vector<PyObject*> codes(mon().scan_codes.begin(), mon().scan_codes.end());
    for (PyObject* code : codes) Py_INCREF(code);
    int rc = 0;
    for (PyObject* code : codes) {
        if (rc == 0) rc = add_break_events(code);
        Py_DECREF(code);
    }
    return rc;
}

namespace {

// A code object of a breakpoint file: kept, and given its line events at once while scan mode
// is in force (a fresh code object has no frame yet; an old one is instrumented in place).
int keep_scan_code(PyObject* code) {
    Monitoring& m = mon();
    if (!m.scan_codes.insert(code).second) return 0;
    Py_INCREF(code);
    state().scan_codes = m.scan_codes.size();
    return m.scan ? add_break_events(code) : 0;
}

// Keeps the code objects of breakpoint files in the trees it visits (a code object and those
// nested in its co_consts), each code object once.
class ScanCollector {
  public:
    // Returns -1 with an exception set.
    int visit(PyObject* code) {
        auto* co = reinterpret_cast<PyCodeObject*>(code);
        PyObject* consts = co->co_consts;
        bool nests = false;
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(consts) && !nests; ++i)
            nests = PyCode_Check(PyTuple_GET_ITEM(consts, i));
        // A tree is walked once; a code object without nested code (most are) is cheaper to
        // look at again, when another function shares it, than to remember.
        if (nests && !seen_.insert(code).second) return 0;
        const int hit = verdict(co->co_filename);
        if (hit < 0 || (hit && keep_scan_code(code) < 0)) return -1;
        for (Py_ssize_t i = 0; nests && i < PyTuple_GET_SIZE(consts); ++i) {
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
    // Whether co_filename names a breakpoint file. Code objects come in files: one verdict per
    // co_filename object saves a dict lookup for each (the objects stay alive: the code objects
    // holding them do), and the heap holds a module's functions together, so the last verdict
    // is asked first.
    int verdict(PyObject* filename) {
        if (filename == last_filename_) return last_verdict_;
        auto known = verdicts_.find(filename);
        int hit;
        if (known != verdicts_.end()) {
            hit = known->second;
        } else {
            hit = is_bp_filename(filename);
            if (hit < 0) return -1;
            verdicts_.emplace(filename, hit != 0);
        }
        last_filename_ = filename;
        last_verdict_ = hit;
        return hit;
    }

    std::unordered_set<PyObject*> seen_;
    std::unordered_map<PyObject*, bool> verdicts_;
    PyObject* last_filename_ = nullptr;
    int last_verdict_ = 0;
};

// The functions, generators, coroutines and async generators the collector tracks, as new
// references: what gc.get_objects() lists, without a list of the whole heap. Nothing runs
// during the visit (it must not change the heap); they are looked at after it.
std::vector<PyObject*> heap_runners() {
    std::vector<PyObject*> found;
    PyUnstable_GC_VisitObjects(
        [](PyObject* o, void* into) {
            if (PyFunction_Check(o) || PyGen_Check(o) || PyCoro_CheckExact(o) ||
                PyAsyncGen_CheckExact(o)) {
                static_cast<std::vector<PyObject*>*>(into)->push_back(Py_NewRef(o));
            }
            return 1;
        },
        &found);
    return found;
}

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
    std::vector<PyObject*> runners;
    if (rc == 0) runners = heap_runners();
    std::unordered_set<PyObject*> unseen(witnesses.begin(), witnesses.end());
    for (PyObject* o : runners) {
        if (!unseen.empty() && PyFunction_Check(o)) unseen.erase(o);
        if (rc == 0) rc = collector.visit_object(o);
        Py_DECREF(o);
    }
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
    if (event != PY_CODE_EVENT_CREATE || mon().scan_files.empty() || making_fast_copy()) return 0;
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

}  // namespace

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

void scan_init() {
    if (!kScanMode) return;
    // Once per process (an audit hook cannot be removed): both return at once while no
    // breakpoint file is armed in scan mode. Without them the engine uses PY_START.
    Monitoring& m = mon();
    m.interpreter = PyInterpreterState_Get();
    if (PyCode_AddWatcher(on_code_event) >= 0 && PySys_AddAuditHook(on_audit, nullptr) == 0)
        m.scan_hooks = true;
    else
        PyErr_Clear();
}

}  // namespace dpdb::engine

#endif
