// What a thread of another process waits in, read from /proc: the system call it is blocked in,
// in words a user knows (a sleep, a lock, a read...).
#pragma once

#include <sys/types.h>

#include <string>

namespace dpdb::attach {

// "a sleep (clock_nanosleep)", "a lock or a condition (futex)"..., or "" if the thread is not
// in a system call (it runs, or /proc cannot say).
std::string waiting_in(pid_t pid, pid_t tid);

}  // namespace dpdb::attach
