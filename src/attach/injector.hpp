// Loads a shared library into a running process and calls its start function, with ptrace and
// no help from the process: dlopen() and dlsym() are found in its libc's exported symbols, and
// called from one of its threads, stopped where such a call is safe (in a system call, or in
// code that holds none of libc's locks). The thread is given back as it was; if any step fails,
// the process is left as it was too (up to a library already loaded, which stays unused).
#pragma once

#include <sys/types.h>

#include <string>

#include "attach/tracee.hpp"

namespace dpdb::attach {

// Calls `start(argument)` of `library` (a function `int start(const char*)` that returns at
// once) in process `pid`. Throws AttachError with a one-line reason.
void inject_library(pid_t pid, const std::string& library, const std::string& start,
                    const std::string& argument);

// Why this process may not trace `pid`, in words a user can act on (the OS only says EPERM).
std::string why_not_traceable(pid_t pid);

}  // namespace dpdb::attach
