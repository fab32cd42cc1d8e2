// The Python stacks of every thread of a CPython process, read from its memory as py-spy dump
// and pystack do: nothing is loaded into the process and it is not stopped, so a process that
// carries no agent, or must not run any code of dpdb's, can still be asked what it is doing.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace dpdb::attach {

struct RemoteFrame {
    std::string file;
    int line = -1;  // -1: the code's table gives the instruction no line
    std::string function;
};

struct RemoteThread {
    unsigned long ident = 0;  // threading's ident (the pthread_t)
    long native_id = 0;       // the kernel's thread id; 0 before 3.11, which does not keep it
    bool main = false;        // the main interpreter's first thread
    std::string name;         // threading's name; empty where it could not be read
    bool holds_gil = false;
    bool complete = true;             // false: the stack changed while it was read (it runs)
    std::vector<RemoteFrame> frames;  // outermost first, as a traceback
};

struct RemoteStacks {
    std::string version;  // "3.12"
    std::vector<RemoteThread> threads;
};

// Throws RemoteReadError with a one-line reason: not a CPython process (or not one dpdb knows),
// the OS refusing the read, the process exiting or still starting.
RemoteStacks read_remote_stacks(pid_t pid);

}  // namespace dpdb::attach
