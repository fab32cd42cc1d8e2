// How the attach gets its start-up script run in the target. Two named routes (DPDB_ATTACH):
// `inject`, dpdb's ptrace injector (attach/injector), for CPython 3.9 and later; `remote_exec`,
// PEP 768's sys.remote_exec() (CPython 3.14+), where the interpreter itself runs a debugger's
// script at its next safe point, asked by a helper process of the target's own interpreter.
// The remote_exec route is written against PEP 768 and Python's documentation of
// sys.remote_exec; no 3.14 interpreter is installed here, so it is untested.
#pragma once

#include <sys/types.h>

#include <string>

#include "attach/python_process.hpp"

namespace dpdb::attach {

enum class Route { inject, remote_exec };

// The route for `target`: DPDB_ATTACH if set (`inject` or `remote_exec`), else `remote_exec` on
// 3.14+ and `inject` before. Throws AttachError when the one asked for cannot serve `target`.
Route route_for(const PythonProcess& target);

// Asks `target`, through a helper process of its own interpreter, to run `script` (a file it
// can read) at its next safe point; returns once the request is made. Throws AttachError with
// the helper's one-line reason (remote debugging disabled in the target, no permission, ...).
void remote_exec(const PythonProcess& target, const std::string& script);

}  // namespace dpdb::attach
