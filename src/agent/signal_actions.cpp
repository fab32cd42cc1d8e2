#include "agent/signal_actions.hpp"

#include <signal.h>

#include <cstring>

namespace dpdb::agent {

std::string signal_action(int signal) {
    struct sigaction action {};
    if (::sigaction(signal, nullptr, &action) != 0) return {};
    return std::string(reinterpret_cast<const char*>(&action), sizeof action);
}

bool restore_signal_action(int signal, const std::string& action) {
    if (action.size() != sizeof(struct sigaction)) return false;
    struct sigaction saved {};
    std::memcpy(&saved, action.data(), sizeof saved);
    return ::sigaction(signal, &saved, nullptr) == 0;
}

std::uintptr_t signal_action_handler(const std::string& action) {
    if (action.size() != sizeof(struct sigaction)) return 0;
    struct sigaction saved {};
    std::memcpy(&saved, action.data(), sizeof saved);
    if (saved.sa_flags & SA_SIGINFO) return reinterpret_cast<std::uintptr_t>(saved.sa_sigaction);
    return reinterpret_cast<std::uintptr_t>(saved.sa_handler);
}

}  // namespace dpdb::agent
