// The time the hub stamps on what it records (process starts and ends, its own log lines): seconds
// since the epoch, as the agents stamp their messages.
#pragma once

#include <chrono>

namespace dpdb::hub {

inline double now_seconds() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

}  // namespace dpdb::hub
