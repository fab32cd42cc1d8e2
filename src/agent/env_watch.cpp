#include "agent/env_watch.hpp"

#include <cstring>

#include "agent/audit_events.hpp"

namespace dpdb::agent {
namespace {

constexpr const char* kVariable = "PYTHONBREAKPOINT";

// Read and replaced with the GIL held only.
PyObject* g_callback = nullptr;

bool is_the_variable(PyObject* key) {
    if (PyUnicode_Check(key)) return PyUnicode_CompareWithASCIIString(key, kVariable) == 0;
    return PyBytes_Check(key) && std::strcmp(PyBytes_AS_STRING(key), kVariable) == 0;
}

void on_environment_event(const char* event, PyObject* args) {
    const bool set = std::strcmp(event, "os.putenv") == 0;
    if (g_callback == nullptr || !PyTuple_Check(args) || PyTuple_GET_SIZE(args) < (set ? 2 : 1) ||
        !is_the_variable(PyTuple_GET_ITEM(args, 0))) {
        return;
    }
    PyObject* value = set ? PyTuple_GET_ITEM(args, 1) : Py_None;
    PyObject* callback = g_callback;
    Py_INCREF(callback);
    PyObject* result = PyObject_CallOneArg(callback, value);
    Py_DECREF(callback);
    if (result == nullptr) {
        // The program's change of its environment goes ahead whatever happened here.
        PyErr_WriteUnraisable(value);
        return;
    }
    Py_DECREF(result);
}

}  // namespace

void watch_breakpoint_variable(PyObject* callback) {
    const bool installed = g_callback != nullptr;
    Py_XINCREF(callback);
    Py_XSETREF(g_callback, callback);
    if (installed) return;
    // Another audit hook may refuse new ones: then a framework's debugger keeps breakpoint().
    watch_audit_event("os.putenv", on_environment_event);
    watch_audit_event("os.unsetenv", on_environment_event);
}

}  // namespace dpdb::agent
