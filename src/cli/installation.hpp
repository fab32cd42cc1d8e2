// Where this dpdb is installed, and what it came with: its executable, the interpreter beside it
// (the one `dpdb run` starts programs with), and what `dpdb --version` says of both.
#pragma once

#include <string>

namespace dpdb::cli {

// NAME's executable file in the first folder of PATH that has one (an empty entry is the
// working directory), or "" if none.
std::string on_path(const std::string& name);

// The dpdb executable that runs now (to start another command of it).
std::string this_executable();

struct Interpreter {
    std::string path;
    std::string why;  // how it was chosen, for `dpdb --version`
};

// The interpreter for a program: `requested` if given, else DPDB_PYTHON (which `python -m dpdb`
// sets to itself), else the pythonX.Y that dpdb was built for: beside this executable (a venv's
// or pipx's bin/, a Python prefix), else on PATH (a `pip install --user`, whose scripts folder
// has no interpreter); never an unversioned python3 that may be another version. Throws, saying
// where it looked, if there is none.
Interpreter program_interpreter(const std::string& requested);
std::string program_python(const std::string& requested);

// "dpdb 0.1.0 (built for Python X.Y)", then the interpreter's version, path and engine strategy
// in force (asked of it, bounded in time) or why it could not say, then how it was chosen.
std::string version_text();

}  // namespace dpdb::cli
