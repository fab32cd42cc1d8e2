// Where this dpdb is installed, and what it came with: its executable, the interpreter beside it
// (the one `dpdb run` starts programs with), and what `dpdb --version` says of both.
#pragma once

#include <string>

namespace dpdb::cli {

// The dpdb executable that runs now (to start another command of it).
std::string this_executable();

// The interpreter for a program: `requested` if given, else DPDB_PYTHON (which `python -m dpdb`
// sets to itself), else the python3 beside this executable (a venv's bin/, a pyenv prefix), else
// python3 on PATH.
std::string program_python(const std::string& requested);

// "dpdb 0.1.0", then the interpreter's version, path and engine strategy in force (asked of it,
// bounded in time), or why it could not say.
std::string version_text();

}  // namespace dpdb::cli
