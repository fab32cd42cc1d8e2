// A signal's action as the kernel has it (sigaction), for what Python's signal module cannot
// see: a handler the program installed in C (a library, an embedding server such as uWSGI)
// leaves signal.getsignal() naming whatever Python installed last, and signal.signal() replaces
// the C handler for good. Saved before dpdb sets a handler of its own, put back exactly after.
#pragma once

#include <cstdint>
#include <string>

namespace dpdb::agent {

// The action of `signal` as raw bytes (a struct sigaction), to be given back to
// restore_signal_action; empty if `signal` is not a valid signal.
std::string signal_action(int signal);

// Puts back an action signal_action returned. Returns whether the kernel took it.
bool restore_signal_action(int signal, const std::string& action);

// The address of the handler in an action signal_action returned (0 for SIG_DFL, 1 for SIG_IGN):
// whether two actions run the same code.
std::uintptr_t signal_action_handler(const std::string& action);

}  // namespace dpdb::agent
