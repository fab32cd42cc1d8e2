// A whole file read with plain system calls. /proc files of a process that has just exited fail
// with ESRCH in the middle of a read: std::istreambuf_iterator lets libstdc++ throw there (it
// ended `dpdb run` once, from the hub's look at an exec'd process). This never throws.
#pragma once

#include <string>
#include <vector>

namespace dpdb {

// The file's bytes, or "" if it cannot be opened or read to its end.
std::string read_whole_file(const std::string& path);

// A process's arguments, from /proc/PID/cmdline; none if it has gone (or is a zombie).
std::vector<std::string> command_line_of(long pid);

}  // namespace dpdb
