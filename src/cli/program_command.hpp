// The command `dpdb run` starts: a Python script or module under the interpreter dpdb is for, or
// an executable that embeds CPython (uWSGI, a C++ program with an interpreter inside) as it is.
// An embedded interpreter imports the agent from PYTHONPATH as python itself does.
#pragma once

#include <string>
#include <vector>

namespace dpdb::cli {

// `python [-m module] args...`, or args as they are when args[0] names a native executable (a
// path, a file in the working directory, or a command on PATH) rather than a script.
std::vector<std::string> program_command(const std::string& python, const std::string& module,
                                         const std::vector<std::string>& args);

// What servers that embed CPython need to be debugged, set for every process of the run (also
// one a wrapper or supervisor starts) unless the user set it: uWSGI forks its workers in C, and
// runs Python's fork hooks there (the agent's new connection and control thread in each worker)
// only when asked to.
void set_environment_for_embedders();

}  // namespace dpdb::cli
