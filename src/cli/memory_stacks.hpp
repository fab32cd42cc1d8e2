// `dpdb stacks -p PID`: a process's stacks without its agent, read from its memory
// (attach/remote_stacks), in the form of a hub's stacks answer so that `dpdb stacks` prints both
// alike.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>

#include "wire/message.hpp"

namespace dpdb::cli {

// Where `dpdb stacks -p` gets a process's stacks (DPDB_STACKS): `agent`, the default, asks the
// hub of a process that carries dpdb's agent and reads the memory of one that does not;
// `memory` always reads the memory. Throws std::runtime_error for another value.
bool stacks_from_agent();

// {"pid", "argv", "read_from_memory" (the version), "stacks": {"threads", "text"}} or {"pid",
// "error"}: one line.
wire::Json memory_stacks(pid_t pid);

// The main thread's innermost `innermost` frames, read from the process's memory, as a traceback
// shows them (a line per frame and its source, each ending in a newline, more frames above
// said); "" where they cannot be read or the stack moved while it was read.
std::string main_thread_stack(pid_t pid, std::size_t innermost);

}  // namespace dpdb::cli
