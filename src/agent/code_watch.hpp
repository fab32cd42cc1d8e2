// Tells Python code the moment code from a watched file is about to run: a module's code before
// its body executes (the "exec" audit event that importlib, runpy and multiprocessing raise), a
// script before it runs ("cpython.run_file"), and code of that file about to be made without an
// import ("compile" of source given a file name; "code.__new__": a function unpickled by value,
// as cloudpickle and dill rebuild it, whose file no module of the process holds). Global
// breakpoints that wait for their file are armed there, before the first line of that file can
// run, instead of on a timer.
//
// Through the agent's one audit hook (agent/audit_events), which goes in before the breakpoint
// engine's own hook, which looks at the same "exec" to find the code of breakpoint files (3.12):
// audit hooks run in the order they were added.
#pragma once

#include <Python.h>

#include <set>
#include <string>
#include <vector>

namespace dpdb::agent {

// Installs the hook (once) and sets what it watches: files whose last path component is one of
// `basenames`; `callback(filename)` is called for each, in the thread that runs the code, before
// it runs. An empty set watches nothing. Both are read and written with the GIL held only.
void watch_code(PyObject* callback, std::set<std::string> basenames);

// The absolute file names of code objects made by `code.__new__` (functions unpickled by value)
// since the hook went in, at most 1024 of them: files no module of the process may name.
std::vector<std::string> made_files();

}  // namespace dpdb::agent
