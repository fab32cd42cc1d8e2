// Which thread holds the GIL and which wait for it, seen at one instant from a thread that does
// not hold it: the holder from CPython's runtime state, the waiters from the futex each thread is
// blocked on (/proc/self/task/TID/syscall) compared with the GIL's condition variable and mutex.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "wire/message.hpp"

namespace dpdb::agent {

struct GilSnapshot {
    bool known = false;
    std::uintptr_t holder_state = 0;  // the holder's PyThreadState, compared only; 0: nobody
    std::vector<long> waiting_native_ids;
    // Filled by resolve():
    unsigned long holder = 0;  // threading ident; 0: nobody holds it, or not resolved
    std::map<long, unsigned long> ident_of_native;  // where the interpreter records native ids

    // Reads the thread states to name the holder and the waiters. Only while no thread state can
    // be freed: with the GIL held, or while its holder is stuck in C code.
    void resolve();

    // Before resolve(), for the thread that will answer with the GIL held:
    // {"holder_state": N|null, "waiting": [native ids]}.
    wire::Json unresolved_json() const;
    // After resolve(): {"holder": ident|null, "waiting": [native ids]}.
    wire::Json to_json() const;
    // "holds the GIL", "waits for the GIL" or "" for the thread with this ident (resolved).
    std::string role_of(unsigned long ident) const;
    // Waiting threads whose ident is unknown, by native id: a line, or "" when there are none.
    std::string unattributed_waiters() const;
};

// Reads no thread state: safe from any thread, at any time. Without an interpreter the snapshot is
// not `known`.
GilSnapshot take_gil_snapshot();

// The ident of the thread whose PyThreadState is `state`, or 0. With the GIL held.
unsigned long ident_of_thread_state(std::uintptr_t state);

}  // namespace dpdb::agent
