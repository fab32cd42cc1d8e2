// Runs a helper program with its output captured, bounded in time: the attach's sys.remote_exec
// helper, and the interpreter that `dpdb --version` asks about its engine.
#pragma once

#include <string>
#include <vector>

namespace dpdb {

struct BoundedRun {
    int status = 0;       // its exit status, or 128 + the signal that ended it
    std::string printed;  // stdout and stderr together, the first 64 KiB
};

// Runs argv (argv[0] a path, or a name looked up in PATH) with stdin from /dev/null. Throws
// std::runtime_error if it cannot be started, or if it does not end within `seconds` (then it is
// killed).
BoundedRun run_bounded(const std::vector<std::string>& argv, int seconds);

// The last non-empty line of a program's output: its one-line reason, as a rule.
std::string last_line(std::string text);

}  // namespace dpdb
