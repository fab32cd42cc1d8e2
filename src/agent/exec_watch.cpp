#include "agent/exec_watch.hpp"

#include <chrono>
#include <cstring>
#include <exception>

#include "agent/audit_events.hpp"
#include "agent/link.hpp"
#include "agent/outbox.hpp"

namespace dpdb::agent {
namespace {

// How long an exec waits for the outbox to hand over what the program posted (a hub that stopped
// reading holds it): the exec goes ahead then, as at exit.
constexpr auto kExecOutboxWait = std::chrono::seconds(1);

// str, bytes or a path-like object as UTF-8 text; what is not valid UTF-8 is escaped, since the
// wire carries UTF-8 only. Empty if it is none of those.
std::string text_of(PyObject* object) {
    PyObject* path = PyOS_FSPath(object);
    if (path == nullptr) {
        PyErr_Clear();
        return "";
    }
    if (PyBytes_Check(path)) {
        Py_SETREF(path, PyUnicode_DecodeFSDefaultAndSize(PyBytes_AS_STRING(path),
                                                         PyBytes_GET_SIZE(path)));
    }
    PyObject* encoded =
        path != nullptr ? PyUnicode_AsEncodedString(path, "utf-8", "backslashreplace") : nullptr;
    Py_XDECREF(path);
    if (encoded == nullptr) {
        PyErr_Clear();
        return "";
    }
    std::string out(PyBytes_AS_STRING(encoded),
                    static_cast<std::size_t>(PyBytes_GET_SIZE(encoded)));
    Py_DECREF(encoded);
    return out;
}

// "os.exec" is raised with (path, argv, env).
void on_exec_event(const char* /*event*/, PyObject* args) {
    if (!PyTuple_Check(args) || PyTuple_GET_SIZE(args) < 2) return;
    std::vector<std::string> argv;
    PyObject* items = PySequence_Fast(PyTuple_GET_ITEM(args, 1), "argv");
    if (items == nullptr) {
        PyErr_Clear();
    } else {
        for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(items); ++i) {
            argv.push_back(text_of(PySequence_Fast_GET_ITEM(items, i)));
        }
        Py_DECREF(items);
    }
    // The program's exec goes ahead, whatever happened here.
    announce_exec(text_of(PyTuple_GET_ITEM(args, 0)), argv);
}

}  // namespace

void watch_exec() {
    // Another audit hook may refuse new ones: then an exec shows as a connection that closed.
    watch_audit_event("os.exec", on_exec_event);
}

void announce_exec(const std::string& path, const std::vector<std::string>& argv) {
    Py_BEGIN_ALLOW_THREADS;
    try {
        // What the program printed last, and the breakpoints it armed, go before the exec
        // replaces the outbox's thread with the new program.
        outbox_drain(kExecOutboxWait);
        Link::instance().announce_exec(path, argv);
    } catch (const std::exception&) {
        // Never in the way of the exec: the hub then sees a connection close without a word.
    }
    Py_END_ALLOW_THREADS;
}

}  // namespace dpdb::agent
