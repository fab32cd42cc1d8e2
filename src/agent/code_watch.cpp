#include "agent/code_watch.hpp"

#include <cstring>
#include <string_view>
#include <utility>

#include "agent/audit_events.hpp"

namespace dpdb::agent {
namespace {

// Read by the hook and replaced by watch_code(), both with the GIL held: the GIL is their lock.
PyObject* g_callback = nullptr;
std::set<std::string, std::less<>>* g_basenames = nullptr;
bool g_installed = false;
// Files of code made without an import (by value, compiled by hand), which no module names:
// a breakpoint set after such code was made finds its file here. Bounded; GIL-protected.
std::set<std::string, std::less<>>* g_made_files = nullptr;
constexpr std::size_t kMadeFilesKept = 1024;

std::string_view basename_of(std::string_view path) {
    const auto slash = path.rfind('/');
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// The file the event is about: a code object's co_filename (exec), run_file's path, or the file
// name of code being made (compile: (source, filename); code.__new__: (code, filename, ...)).
PyObject* filename_of(const char* event, PyObject* args) {
    if (!PyTuple_Check(args) || PyTuple_GET_SIZE(args) < 1) return nullptr;
    PyObject* first = PyTuple_GET_ITEM(args, 0);
    if (std::strcmp(event, "exec") == 0) {
        return PyCode_Check(first) ? reinterpret_cast<PyCodeObject*>(first)->co_filename : nullptr;
    }
    if (std::strcmp(event, "cpython.run_file") == 0)
        return PyUnicode_Check(first) ? first : nullptr;
    if (std::strcmp(event, "compile") == 0 || std::strcmp(event, "code.__new__") == 0) {
        if (PyTuple_GET_SIZE(args) < 2) return nullptr;
        PyObject* second = PyTuple_GET_ITEM(args, 1);
        return PyUnicode_Check(second) ? second : nullptr;
    }
    return nullptr;
}

void on_code_event(const char* event, PyObject* args) {
    const bool made = std::strcmp(event, "code.__new__") == 0;
    if (!made && (g_basenames == nullptr || g_basenames->empty())) return;
    PyObject* filename = filename_of(event, args);
    if (filename == nullptr || !PyUnicode_Check(filename)) return;
    Py_ssize_t size = 0;
    const char* text = PyUnicode_AsUTF8AndSize(filename, &size);
    if (text == nullptr) {
        PyErr_Clear();
        return;
    }
    if (made && size > 0 && text[0] == '/' && g_made_files->size() < kMadeFilesKept) {
        g_made_files->emplace(text, static_cast<std::size_t>(size));
    }
    if (g_basenames == nullptr || g_basenames->empty()) return;
    if (g_basenames->find(basename_of({text, static_cast<std::size_t>(size)})) ==
        g_basenames->end()) {
        return;
    }
    // The callback may replace the watch (and with it g_callback): hold our own reference.
    PyObject* callback = g_callback;
    Py_XINCREF(callback);
    PyObject* result = callback ? PyObject_CallOneArg(callback, filename) : nullptr;
    Py_XDECREF(callback);
    if (result == nullptr) {
        // The program's code must run whatever happened here: never fail its exec.
        if (PyErr_Occurred()) PyErr_WriteUnraisable(filename);
        return;
    }
    Py_DECREF(result);
}

}  // namespace

void watch_code(PyObject* callback, std::set<std::string> basenames) {
    Py_XINCREF(callback);
    Py_XSETREF(g_callback, callback);
    auto* fresh = new std::set<std::string, std::less<>>(std::make_move_iterator(basenames.begin()),
                                                         std::make_move_iterator(basenames.end()));
    delete std::exchange(g_basenames, fresh);
    if (g_installed) return;
    if (g_made_files == nullptr) g_made_files = new std::set<std::string, std::less<>>();
    // Another audit hook may refuse new ones: then breakpoints are armed by the timer only.
    g_installed = true;
    for (const char* event : {"exec", "cpython.run_file", "compile", "code.__new__"}) {
        g_installed = watch_audit_event(event, on_code_event) && g_installed;
    }
}

std::vector<std::string> made_files() {
    if (g_made_files == nullptr) return {};
    return {g_made_files->begin(), g_made_files->end()};
}

}  // namespace dpdb::agent
