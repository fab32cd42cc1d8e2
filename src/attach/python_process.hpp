// What `dpdb attach` needs to know of a process before it touches it: is it CPython, which
// version, does it carry the dpdb agent already, and which processes are below it.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "attach/symbols.hpp"

namespace dpdb::attach {

struct PythonProcess {
    pid_t pid = 0;
    uid_t uid = 0;
    gid_t gid = 0;
    std::string version;     // "3.12"
    std::string executable;  // /proc/PID/exe, as the process sees it
    bool has_agent = false;  // dpdb's agent is loaded in it already
};

// The process as a CPython process, or nothing (with the reason in `why`) if it is not one.
std::optional<PythonProcess> inspect_python(pid_t pid, std::string* why);

// The mapped file that holds the interpreter: libpython, or the executable of a static build.
const MappedFile* interpreter_image(const std::vector<MappedFile>& files,
                                    const std::string& executable);

// Whether the process still runs (a zombie, dead but not yet reaped by its parent, does not).
bool running(pid_t pid);

// Every process below `pid` (children, their children...), parents before children.
std::vector<pid_t> descendants(pid_t pid);

}  // namespace dpdb::attach
