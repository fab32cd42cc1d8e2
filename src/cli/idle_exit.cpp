#include "cli/idle_exit.hpp"

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <exception>

namespace dpdb::cli {
namespace {

constexpr int kListTimeoutMs = 10000;

bool has_work(const wire::Json& listing) {
    for (const char* key : {"processes", "sessions"}) {
        const auto it = listing.find(key);
        if (it != listing.end() && it->is_array() && !it->empty()) return true;
    }
    return false;
}

}  // namespace

IdleExit::IdleExit(HubTarget hub, std::chrono::seconds idle)
    : hub_(std::move(hub)), idle_(idle), thread_([this] { watch(); }) {}

IdleExit::~IdleExit() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
}

void IdleExit::watch() {
    // A quarter of the idle time between two looks (within 1 to 30 s): it ends at most a quarter
    // late, and asks rarely.
    const auto interval = std::clamp<std::chrono::milliseconds>(idle_ / 4, std::chrono::seconds(1),
                                                                std::chrono::seconds(30));
    auto busy_at = std::chrono::steady_clock::now();
    std::unique_lock<std::mutex> lock(mutex_);
    while (!wake_.wait_for(lock, interval, [this] { return stopping_; })) {
        bool busy = true;  // a hub that does not answer now is not known to be idle
        try {
            busy = has_work(list_hub(hub_, kListTimeoutMs));
        } catch (const std::exception&) {
        }
        const auto now = std::chrono::steady_clock::now();
        if (busy) {
            busy_at = now;
        } else if (now - busy_at >= idle_) {
            ::kill(::getpid(), SIGTERM);
            return;
        }
    }
}

}  // namespace dpdb::cli
