// Which thread holds the GIL and which wait for it, seen at one instant from a thread that does
// not hold it: the holder from CPython's runtime state, the waiters from the futex each thread is
// blocked on (/proc/self/task/TID/syscall) compared with the GIL's condition variable and mutex.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "wire/message.hpp"

namespace dpdb::agent {

struct GilSnapshot {
    bool known = false;
    unsigned long holder = 0;  // threading ident; 0: nobody holds it
    std::vector<long> waiting_native_ids;
    // Native id -> ident, where the interpreter records native ids (3.11 and later).
    std::map<long, unsigned long> ident_of_native;

    // {"holder": ident|null, "waiting": [native ids]}, for the Python side that knows every
    // thread's native id.
    wire::Json to_json() const;
    // "holds the GIL", "waits for the GIL" or "" for the thread with this ident.
    std::string role_of(unsigned long ident) const;
    // Waiting threads whose ident is unknown, by native id: a line, or "" when there are none.
    std::string unattributed_waiters() const;
};

// Needs no GIL; without an interpreter the snapshot is not `known`.
GilSnapshot take_gil_snapshot();

}  // namespace dpdb::agent
